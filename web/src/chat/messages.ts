// Pure helpers of the chat view (unit-tested).
import type { ChatMessage } from "../api/client";

/** Microseconds since the epoch: a turn's reply is stored 1 µs after the user's message,
 * finer than `Date.parse` sees. */
export function micros(iso: string): number {
  const parts = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/.exec(iso);
  if (!parts) return Date.parse(iso) * 1000;
  const fraction = (parts[2] ?? "").padEnd(6, "0").slice(0, 6);
  return Date.parse(`${parts[1]}${parts[3]}`) * 1000 + Number(fraction);
}

/** The chat's messages with the newly polled ones, each once, oldest first. */
export function mergeMessages(known: ChatMessage[], incoming: ChatMessage[]): ChatMessage[] {
  const byId = new Map(known.map((m) => [m.id, m]));
  for (const message of incoming) byId.set(message.id, message);
  return [...byId.values()].sort((a, b) => micros(a.created_at) - micros(b.created_at) || a.id.localeCompare(b.id));
}

/** What `/messages` takes as `after`: the newest message seen. */
export function newestTime(messages: ChatMessage[]): string | null {
  return messages.at(-1)?.created_at ?? null;
}

export type JobStatus = "running" | "waiting" | "paused" | "stalled" | "cancelled" | "done" | "failed" | "finished";
export type JobAction = "pause" | "resume" | "cancel" | "takeover";

/** The controls a job in this state accepts (the server answers 409 job_not_active otherwise). */
export function actionsFor(status: JobStatus): JobAction[] {
  switch (status) {
    case "running":
    case "waiting":
      return ["pause", "cancel", "takeover"];
    case "paused":
    case "stalled":
      return ["resume", "cancel", "takeover"];
    default:
      return [];
  }
}

/** A job posts its result as the message `<job id>-result`: then it is over. */
export function finishedJobs(messages: ChatMessage[], jobIds: string[]): Set<string> {
  const ids = new Set(messages.map((m) => m.id));
  return new Set(jobIds.filter((job) => ids.has(`${job}-result`)));
}

/** A client_message_id the server accepts (`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`). */
export function newClientMessageId(): string {
  return `web-${crypto.randomUUID()}`;
}

/** The card a question message asked, when this page has seen that card (open now, or
 * answered here): the log then keeps a short line, the card (or the answer after it) says
 * the rest. Tied by the question's id, never by reading the text. */
export function seenQuestion<K>(message: ChatMessage, asked: Map<string, K>): K | null {
  if (message.kind !== "question" || !message.question_id) return null;
  return asked.get(message.question_id) ?? null;
}
