import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from "react";
import type { Api, Chat } from "../api/client";
import { Jobs } from "./Jobs";
import { finishedJobs } from "./messages";
import { Question } from "./Question";
import { Sources } from "./Sources";
import { useChat } from "./useChat";

const WHEN = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

function chatWhen(chat: Chat): string {
  return `${WHEN.format(new Date(chat.updated_at))} · ${chat.message_count} messages`;
}

export function ChatPage({ api }: { api: Api }) {
  const chat = useChat(api);
  const [draft, setDraft] = useState("");
  const question = chat.interrupt;
  const log = useRef<HTMLOListElement>(null);
  const liveText = chat.live?.text;
  useEffect(() => {
    // Keep the newest message in view as messages arrive and the reply streams in.
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [chat.messages.length, liveText]);

  function submit(event?: FormEvent) {
    event?.preventDefault();
    const text = draft.trim();
    if (!text || chat.busy) return;
    setDraft("");
    void chat.send(text);
  }

  function onKey(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && !event.shiftKey) submit(event);
  }

  return (
    <div className="chat-page">
      <nav className="chat-list" aria-label="Chats">
        <button type="button" className="new-chat" onClick={() => void chat.open(null)} aria-current={chat.chatId === null}>
          New chat
        </button>
        <ul>
          {chat.chats.map((c) => (
            <li key={c.id}>
              <button type="button" onClick={() => void chat.open(c.id)} aria-current={c.id === chat.chatId}>
                <span className="chat-title">{c.title || "New chat"}</span>
                <small className="chat-when">{chatWhen(c)}</small>
                {c.question && <span className="badge">question</span>}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <section className="conversation" aria-label="Conversation">
        <ol ref={log} className="messages" role="log" aria-live="polite" aria-label="Messages">
          {chat.messages.map((m) => (
            <li key={m.id} className={`message ${m.role}`} data-id={m.id}>
              {m.text}
              <Sources message={m} />
            </li>
          ))}
          {chat.outgoing !== null && <li className="message user pending">{chat.outgoing}</li>}
          {chat.live !== null && (
            <li className="message assistant live" data-live="" data-chunks={chat.live.chunks} aria-busy="true">
              {chat.live.text || "…"}
            </li>
          )}
          {chat.messages.length === 0 && chat.outgoing === null && <li className="empty">Say something to start.</li>}
        </ol>
        {chat.notice && (
          <p role="status" className="notice">
            {chat.notice}
          </p>
        )}
        {chat.failure && (
          <p role="alert" className="error">
            {chat.failure.message} <code>{chat.failure.code}</code>
          </p>
        )}
        {question && (
          <Question
            key={question.id}
            question={question}
            disabled={chat.busy}
            onAnswer={(answer, shown) => void chat.answer(question, answer, shown)}
          />
        )}
        {chat.jobs.length > 0 && (
          <Jobs
            jobs={chat.jobs}
            finished={finishedJobs(chat.messages, chat.jobs.map((j) => j.id))}
            onControl={(job, action) => void chat.controlJob(job, action)}
          />
        )}
        <form className="composer" onSubmit={submit}>
          <label htmlFor="message" className="visually-hidden">
            Message
          </label>
          <textarea
            id="message"
            rows={2}
            maxLength={8000}
            placeholder="Message (Enter sends, Shift+Enter for a new line)"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onKey}
          />
          <button type="submit" disabled={chat.busy || !draft.trim()}>
            Send
          </button>
        </form>
      </section>
    </div>
  );
}
