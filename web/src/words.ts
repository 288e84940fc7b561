// The one place where words meant for us (agent and tool names, error codes, raw numbers)
// become words for a person. Everything the server says passes through `plain` before it
// is shown; src/internal-words.json is also what the browser tests look for on screen.
import internal from "./internal-words.json";
import type { ApiFailure } from "./api/client";

const AGENTS: Record<string, string> = internal.agents;
const TOOLS: Record<string, string> = internal.tools;
const CODES: Record<string, string> = internal.codes;
const GENERIC_FAILURE = "something went wrong";

const names = (table: Record<string, string>) => Object.keys(table).join("|");
// "productivity: What are my reminders?" -> "What are my reminders?"
const AGENT_PREFIX = new RegExp(`(^|[\\s?.!])(?:${names(AGENTS)})\\s?:\\s*`, "g");
// "I've started on it (productivity, wealth)" -> "I've started on it"
const AGENT_LIST = new RegExp(`\\s*\\((?:(?:${names(AGENTS)})(?:,\\s*)?)+\\)`, "g");
// "may I run email_send?" -> "may I send this email?"
const TOOL_RUN = new RegExp(`\\brun (${names(TOOLS)})\\b`, "g");
const TOOL_WORD = new RegExp(`\\b(${names(TOOLS)})\\b`, "g");
// "step_limit: no answer after 8 steps" or "(step_limit)" -> a sentence
const CODE_WITH_DETAIL = new RegExp(`\\b(${names(CODES)}): [^.\\n]*`, "g");
const CODE_IN_PARENS = new RegExp(`\\s*\\((${names(CODES)})\\)`, "g");
const LONG_FLOAT = /\b0\.\d{3,}\b/g;

/** A server text with every internal word replaced by plain words. */
export function plain(text: string): string {
  return text
    .replace(CODE_WITH_DETAIL, (_, code: string) => CODES[code] ?? GENERIC_FAILURE)
    .replace(CODE_IN_PARENS, (_, code: string) => ` (${CODES[code] ?? GENERIC_FAILURE})`)
    .replace(AGENT_LIST, "")
    .replace(AGENT_PREFIX, "$1")
    .replace(TOOL_RUN, (_, tool: string) => TOOLS[tool] ?? "do this")
    .replace(TOOL_WORD, (_, tool: string) => TOOLS[tool] ?? "a step")
    .replace(LONG_FLOAT, (f) => percent(Number(f)));
}

/** A share as a whole percentage: 0.6666666666666666 -> "67%". */
export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** A failure as one sentence a person can act on (the code stays in the console). */
export function failureText(failure: Pick<ApiFailure, "code" | "message">): string {
  const known = CODES[failure.code];
  if (known) return capitalize(`${known}.`);
  return capitalize(`${plain(failure.message) || GENERIC_FAILURE}.`).replace(/\.\.$/, ".");
}

/** A job's state in words. */
export function jobState(status: string): string {
  const words: Record<string, string> = {
    running: "working on it",
    waiting: "waiting for you",
    paused: "paused",
    stalled: "stuck",
    cancelled: "stopped",
    done: "done",
    finished: "done",
    failed: "could not finish",
  };
  return words[status] ?? "working on it";
}

/** One requirement of the next trust level: "success rate: 67% of 90%". */
export function requirement(name: string, current: number | null, required: number): string {
  const label = name.replaceAll("_", " ");
  const isShare = name.endsWith("rate");
  const show = (n: number) => (isShare ? percent(n) : String(Math.round(n * 10) / 10));
  return `${label}: ${current === null ? "none yet" : show(current)} of ${show(required)}`;
}

/** What the agents are about, for a job's details: "your budget and expenses". */
export function agentWords(agent: string): string {
  return AGENTS[agent] ?? "a step";
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Every internal label (tests read the JSON directly). */
export const INTERNAL_LABELS = [...Object.keys(AGENTS), ...Object.keys(TOOLS), ...Object.keys(CODES)];
