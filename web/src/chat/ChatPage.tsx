import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from "react";
import { failureText, plain } from "../words";
import { Jobs } from "./Jobs";
import { finishedJobs, seenQuestion } from "./messages";
import { KIND_TITLES, Question } from "./Question";
import { Sources } from "./Sources";
import type { useChat } from "./useChat";

type ChatState = ReturnType<typeof useChat>;

/** The open chat: the log, the open question as a card with its buttons, the chat's tasks,
 * and the composer pinned at the bottom. */
export function ChatPage({ chat }: { chat: ChatState }) {
  const [draft, setDraft] = useState("");
  const question = chat.interrupt;
  const log = useRef<HTMLDivElement>(null);
  const liveText = chat.live?.text;
  useEffect(() => {
    // Keep the newest message in view as messages arrive and the reply streams in.
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [chat.messages.length, liveText, question?.id]);

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
      <section className="conversation" aria-label="Conversation">
        <div ref={log} className="messages" role="log" aria-live="polite" aria-label="Messages" tabIndex={0}>
          <ol>
          {chat.messages.map((m) => {
            // A question is shown once: the card says it while it is open, the log a short line.
            const seen = seenQuestion(m, chat.asked);
            const asked = m.kind === "question";
            return (
              <li key={m.id} className={`message ${m.role}${asked ? " asked" : ""}`} data-id={m.id} data-kind={m.kind}>
                {seen ? `Asked: ${KIND_TITLES[seen]}` : plain(m.text)}
                {asked ? null : <Sources message={m} />}
              </li>
            );
          })}
          {chat.outgoing !== null && <li className="message user pending">{chat.outgoing}</li>}
          {chat.live !== null && (
            <li className="message assistant live" data-live="" data-chunks={chat.live.chunks} aria-busy="true">
              {plain(chat.live.text) || "…"}
            </li>
          )}
          {chat.messages.length === 0 && chat.outgoing === null && <li className="empty">Say something to start.</li>}
          </ol>
        </div>
        <div className="dock">
          {chat.notice && (
            <p role="status" className="notice">
              {chat.notice}
            </p>
          )}
          {chat.failure && (
            <p role="alert" className="error">
              {failureText(chat.failure)}
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
              rows={1}
              maxLength={8000}
              placeholder="Message"
              aria-describedby="composer-hint"
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={onKey}
            />
            <span id="composer-hint" className="visually-hidden">
              Enter sends, Shift+Enter starts a new line.
            </span>
            <button type="submit" disabled={chat.busy || !draft.trim()}>
              Send
            </button>
          </form>
        </div>
      </section>
    </div>
  );
}
