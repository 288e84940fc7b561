// The chat's state: the user's chats, the open chat's messages (polled), the reply streaming
// in, the open question and the chat's agent jobs.
import { useCallback, useEffect, useRef, useState } from "react";
import {
  type Api,
  ApiFailure,
  type ChatMessage,
  type ChatSummary,
  type Interrupt,
  ok,
} from "../api/client";
import { type Exchange, streamExchange } from "../api/exchange";
import { type JobView, addJobs, controlJob as askJob, storedJobs, updateJob } from "./jobs";
import { type JobAction, mergeMessages, newClientMessageId, newestTime } from "./messages";

const POLL_MS = 2000;

export interface LiveReply {
  text: string;
  chunks: number;
}

function asFailure(error: unknown): ApiFailure {
  return error instanceof ApiFailure ? error : new ApiFailure(0, "client_error", String(error));
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
        if (reply.jobs?.length) setJobs(addJobs(user, id, reply.jobs));
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
    [api, poll, refreshChats, user],
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
    try {
      setJobs(updateJob(user, chat, job, await askJob(api, job, action)));
      await poll(chat);
    } catch (error) {
      const failed = asFailure(error);
      if (failed.code !== "job_not_active") return setFailure(failed);
      setJobs(updateJob(user, chat, job, { status: "finished" }));
      setNotice("That job is no longer active.");
    }
  };

  return { chats, chatId, messages, interrupt, outgoing, live, jobs, notice, failure, busy, open, send, answer, controlJob };
}

async function listChats(api: Api): Promise<ChatSummary[]> {
  return (await ok(api.POST("/chats", { body: {} }))).chats;
}
