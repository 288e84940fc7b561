// The chat's state: the user's chats, the open chat's messages (polled), the reply streaming
// in, the open question and the chat's agent jobs.
import { useCallback, useEffect, useRef, useState } from "react";
import { type Api, ApiFailure, type Chat, type ChatMessage, type Interrupt, ok } from "../api/client";
import { type Exchange, streamExchange } from "../api/exchange";
import { type JobView, controlJob as askJob, chatJobs, withJob } from "./jobs";
import { type JobAction, mergeMessages, newClientMessageId, newestTime } from "./messages";

const POLL_MS = 2000;

export interface LiveReply {
  text: string;
  chunks: number;
}

function asFailure(error: unknown): ApiFailure {
  return error instanceof ApiFailure ? error : new ApiFailure(0, "client_error", String(error));
}

export function useChat(api: Api, initialChat: string | null = null) {
  const [chats, setChats] = useState<Chat[]>([]);
  const [chatId, setChatId] = useState<string | null>(initialChat);
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [interrupt, setInterrupt] = useState<Interrupt | null>(null);
  const [outgoing, setOutgoing] = useState<string | null>(null);
  const [live, setLive] = useState<LiveReply | null>(null);
  const [jobs, setJobs] = useState<JobView[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);
  // What the poll timer and the stream callbacks read without re-creating themselves.
  const current = useRef({ chatId: initialChat, messages: [] as ChatMessage[], busy: false });
  // The questions seen open in this page (id -> kind): their log lines stay short.
  const [asked, setAsked] = useState<Map<string, Interrupt["kind"]>>(() => new Map());

  const refreshChats = useCallback(async () => setChats(await listChats(api)), [api]);

  const refreshJobs = useCallback(
    async (id: string) => {
      const found = await chatJobs(api, id);
      if (current.current.chatId === id) setJobs(found);
    },
    [api],
  );

  const poll = useCallback(
    async (id: string, full = false) => {
      const after = full ? null : newestTime(current.current.messages);
      // A whole chat: its newest 200 messages; a poll: what arrived after the newest one seen.
      const query = after
        ? { filter: `create_time > "${after}"`, page_size: 200 }
        : { order_by: "create_time desc" as const, page_size: 200 };
      const path = { chat: id };
      const view = await ok(api.GET("/v1/chats/{chat}/messages", { params: { path, query } }));
      if (current.current.chatId !== id) return; // the user opened another chat meanwhile
      const merged = mergeMessages(full ? [] : current.current.messages, view.messages);
      const arrived = merged.length !== current.current.messages.length;
      current.current.messages = merged;
      setMessages(merged);
      setInterrupt(view.question ?? null);
      const open = view.question;
      if (open) setAsked((known) => (known.has(open.id) ? known : new Map(known).set(open.id, open.kind)));
      if (arrived && !full) await refreshJobs(id); // a job's progress or result came in
    },
    [api, refreshJobs],
  );

  const open = useCallback(
    async (id: string | null) => {
      current.current = { ...current.current, chatId: id, messages: [] };
      setChatId(id);
      setMessages([]);
      setInterrupt(null);
      setNotice(null);
      setFailure(null);
      setJobs([]);
      if (id) {
        await poll(id, true).catch((e: unknown) => setFailure(asFailure(e)));
        await refreshJobs(id).catch(() => undefined);
      }
    },
    [poll, refreshJobs],
  );

  useEffect(() => {
    listChats(api).then(setChats, (e: unknown) => setFailure(asFailure(e)));
  }, [api]);

  useEffect(() => {
    if (!initialChat) return; // else a notification's link: "/?chat=<id>"
    poll(initialChat, true).catch((e: unknown) => setFailure(asFailure(e)));
    refreshJobs(initialChat).catch(() => undefined);
  }, [initialChat, poll, refreshJobs]);

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
        if (exchange.kind === "turn" && !exchange.chat) {
          // A new chat: made first, named by the message's request id, so a retry finds it.
          const request_id = exchange.body.client_message_id;
          const made = await ok(api.POST("/v1/chats", { params: { query: { request_id } }, body: {} }));
          exchange = { ...exchange, chat: made.id };
        }
        const isNew = id !== exchange.chat;
        id = exchange.chat;
        if (isNew) {
          current.current.chatId = id;
          setChatId(id);
        }
        const reply = await streamExchange(api, exchange, {
          onChunk: (text) => setLive((l) => ({ text: (l?.text ?? "") + text, chunks: (l?.chunks ?? 0) + 1 })),
          onRetry: () => setLive({ text: "", chunks: 0 }),
        });
        await poll(id, isNew);
        if (reply.jobs?.length || isNew) await refreshJobs(id);
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
    [api, poll, refreshChats, refreshJobs],
  );

  const send = (message: string) =>
    run(
      {
        kind: "turn",
        chat: current.current.chatId ?? "",
        body: { message, client_message_id: newClientMessageId() },
      },
      message,
    );

  const answer = (question: Interrupt, answer: string, shown: string) => {
    const chat = current.current.chatId;
    if (!chat) return Promise.resolve();
    return run({ kind: "resume", chat, question: question.id, body: { answer } }, shown);
  };

  const controlJob = async (job: string, action: JobAction) => {
    const chat = current.current.chatId;
    if (!chat) return;
    try {
      const changed = await askJob(api, job, action);
      setJobs((jobs) => withJob(jobs, job, changed));
      await poll(chat);
    } catch (error) {
      const failed = asFailure(error);
      if (failed.code !== "job_not_active") return setFailure(failed);
      await refreshJobs(chat).catch(() => undefined);
      setNotice("That task is no longer running.");
    }
  };

  return { chats, chatId, messages, asked, interrupt, outgoing, live, jobs, notice, failure, busy, open, send, answer, controlJob };
}

async function listChats(api: Api): Promise<Chat[]> {
  return (await ok(api.GET("/v1/chats", { params: { query: { page_size: 100 } } }))).chats;
}
