// The chat's state: the user's chats, the open chat's messages (polled), the reply streaming
// in, the open question and the chat's agent jobs.
import { useCallback, useEffect, useRef, useState } from "react";
import {
  type Api,
  ApiFailure,
  type ChatMessage,
  type ChatSummary,
  type Interrupt,
  type Schemas,
  ok,
} from "../api/client";
import { type Exchange, streamExchange } from "../api/exchange";
import { type JobAction, type JobStatus, mergeMessages, newClientMessageId, newestTime } from "./messages";

const POLL_MS = 2000;

export interface LiveReply {
  text: string;
  chunks: number;
}

export interface JobView {
  id: string;
  status: JobStatus;
  context?: Schemas["JobContext"];
}

function asFailure(error: unknown): ApiFailure {
  return error instanceof ApiFailure ? error : new ApiFailure(0, "client_error", String(error));
}

const jobsKey = (user: string, chat: string) => `assistant.jobs.${user}.${chat}`;

function storedJobs(user: string, chat: string | null): JobView[] {
  if (!chat) return [];
  try {
    return JSON.parse(localStorage.getItem(jobsKey(user, chat)) ?? "[]") as JobView[];
  } catch {
    return [];
  }
}

export function useChat(api: Api, user: string) {
  const [chats, setChats] = useState<ChatSummary[]>([]);
  const [chatId, setChatId] = useState<string | null>(null);
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [interrupt, setInterrupt] = useState<Interrupt | null>(null);
  const [outgoing, setOutgoing] = useState<string | null>(null);
  const [live, setLive] = useState<LiveReply | null>(null);
  const [jobs, setJobs] = useState<JobView[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);
  // What the poll timer and the stream callbacks read without re-creating themselves.
  const current = useRef({ chatId: null as string | null, messages: [] as ChatMessage[], busy: false });

  const refreshChats = useCallback(async () => setChats(await listChats(api)), [api]);

  const poll = useCallback(
    async (id: string, full = false) => {
      const after = full ? null : newestTime(current.current.messages);
      const view = await ok(api.POST("/messages", { body: { chat_id: id, after, limit: full ? 200 : 50 } }));
      if (current.current.chatId !== id) return; // the user opened another chat meanwhile
      const merged = mergeMessages(full ? [] : current.current.messages, view.messages);
      current.current.messages = merged;
      setMessages(merged);
      setInterrupt(view.interrupt ?? null);
    },
    [api],
  );

  const saveJobs = useCallback(
    (id: string, next: JobView[]) => {
      localStorage.setItem(jobsKey(user, id), JSON.stringify(next));
      setJobs(next);
    },
    [user],
  );

  const open = useCallback(
    async (id: string | null) => {
      current.current = { ...current.current, chatId: id, messages: [] };
      setChatId(id);
      setMessages([]);
      setInterrupt(null);
      setNotice(null);
      setFailure(null);
      setJobs(storedJobs(user, id));
      if (id) await poll(id, true).catch((e: unknown) => setFailure(asFailure(e)));
    },
    [poll, user],
  );

  useEffect(() => {
    listChats(api).then(setChats, (e: unknown) => setFailure(asFailure(e)));
  }, [api]);

  useEffect(() => {
    if (!chatId) return;
    const timer = setInterval(() => {
      if (!current.current.busy) poll(chatId).catch(() => undefined); // the next poll retries
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [chatId, poll]);

  const run = useCallback(
    async (exchange: Exchange, shown: string) => {
      if (current.current.busy) return; // a double click sends nothing twice
      current.current.busy = true;
      setBusy(true);
      setFailure(null);
      setNotice(null);
      setOutgoing(shown);
      setLive({ text: "", chunks: 0 });
      let id = current.current.chatId;
      try {
        const reply = await streamExchange(api, exchange, {
          onChunk: (text) => setLive((l) => ({ text: (l?.text ?? "") + text, chunks: (l?.chunks ?? 0) + 1 })),
          onRetry: () => setLive({ text: "", chunks: 0 }),
        });
        const isNew = id !== reply.chat_id;
        id = reply.chat_id;
        if (isNew) {
          current.current.chatId = id;
          setChatId(id);
        }
        const started = (reply.jobs ?? []).map((job): JobView => ({ id: job, status: "running" }));
        if (started.length) saveJobs(id, [...storedJobs(user, id), ...started]);
        await poll(id, isNew);
      } catch (error) {
        const failed = asFailure(error);
        if (failed.code === "interrupt_not_pending") {
          setNotice("Already answered: this question was answered elsewhere or is no longer open.");
          setInterrupt(null);
        } else {
          setFailure(failed);
        }
        if (id) await poll(id).catch(() => undefined);
      } finally {
        current.current.busy = false;
        setBusy(false);
        setLive(null);
        setOutgoing(null);
        refreshChats().catch(() => undefined);
      }
    },
    [api, poll, refreshChats, saveJobs, user],
  );

  const send = (message: string) =>
    run(
      { kind: "turn", body: { chat_id: current.current.chatId, message, client_message_id: newClientMessageId() } },
      message,
    );

  const answer = (question: Interrupt, answer: string, shown: string) => {
    const chat = current.current.chatId;
    if (!chat) return Promise.resolve();
    return run({ kind: "resume", body: { chat_id: chat, interrupt_id: question.id, answer } }, shown);
  };

  const controlJob = async (job: string, action: JobAction) => {
    const chat = current.current.chatId;
    if (!chat) return;
    const update = (change: Partial<JobView>) =>
      saveJobs(chat, storedJobs(user, chat).map((j) => (j.id === job ? { ...j, ...change } : j)));
    try {
      if (action === "takeover") {
        const context = await ok(api.POST("/jobs/takeover", { body: { job_id: job } }));
        update({ status: "cancelled", context });
      } else {
        update({ status: (await jobControl(api, job, action)).status as JobStatus });
      }
      await poll(chat);
    } catch (error) {
      const failed = asFailure(error);
      if (failed.code === "job_not_active") {
        update({ status: "finished" });
        setNotice("That job is no longer active.");
      } else setFailure(failed);
    }
  };

  return { chats, chatId, messages, interrupt, outgoing, live, jobs, notice, failure, busy, open, send, answer, controlJob };
}

async function listChats(api: Api): Promise<ChatSummary[]> {
  return (await ok(api.POST("/chats", { body: {} }))).chats;
}

function jobControl(api: Api, job: string, action: Exclude<JobAction, "takeover">) {
  const body = { body: { job_id: job } };
  switch (action) {
    case "pause":
      return ok(api.POST("/jobs/pause", body));
    case "resume":
      return ok(api.POST("/jobs/resume", body));
    case "cancel":
      return ok(api.POST("/jobs/cancel", body));
  }
}
