// One message (a turn) or one answer to the chat's question, streamed, retried on network loss
// with the very same body: a turn keeps its `client_message_id`, so the server runs it at most
// once and a retry gets the recorded reply.
import { type Api, ApiFailure, type Schemas, failureFrom } from "./client";
import { readUntilClosed } from "./sse";

export type Exchange =
  | { kind: "turn"; chat: string; body: Schemas["NewMessage"] }
  | { kind: "resume"; chat: string; question: string; body: Schemas["Answer"] };

export interface StreamHandlers {
  onChunk: (text: string) => void;
  /** A new attempt begins: drop what the lost one streamed (the reply comes again whole). */
  onRetry: (attempt: number) => void;
}

export interface RetryPolicy {
  attempts: number;
  delayMs: (attempt: number) => number;
  sleep: (ms: number) => Promise<void>;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  delayMs: (attempt) => Math.min(500 * 2 ** (attempt - 1), 4000),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

const STREAM = { Accept: "text/event-stream" };

function post(api: Api, exchange: Exchange) {
  if (exchange.kind === "turn") {
    const params = { path: { chat: exchange.chat } };
    return api.POST("/v1/chats/{chat}/messages", { params, body: exchange.body, headers: STREAM, parseAs: "stream" });
  }
  const params = { path: { chat: exchange.chat, question: exchange.question } };
  return api.POST("/v1/chats/{chat}/questions/{question}:answer", {
    params,
    body: exchange.body,
    headers: STREAM,
    parseAs: "stream",
  });
}

type Attempt = { reply: Schemas["TurnResponse"] } | { retry: true };

async function attemptOnce(api: Api, exchange: Exchange, onChunk: StreamHandlers["onChunk"]) {
  let result: Awaited<ReturnType<typeof post>>;
  try {
    result = await post(api, exchange);
  } catch {
    return { retry: true } as Attempt; // no answer at all: the network
  }
  const { data, error, response } = result;
  if (!response.ok || !data) {
    const failure = failureFrom(response.status, error);
    // The first try is still running on the server: ask again later, same id.
    if (failure.code === "turn_in_progress" && exchange.kind === "turn") return { retry: true };
    throw failure;
  }
  let closing;
  try {
    closing = await readUntilClosed(data, onChunk);
  } catch {
    return { retry: true } as Attempt; // the connection broke mid-stream
  }
  if (closing === null) return { retry: true } as Attempt;
  if (closing.event === "error") throw new ApiFailure(200, closing.data.code, closing.data.message);
  return { reply: closing.data } as Attempt;
}

/** The reply of a turn or an answer; throws `ApiFailure` (code `network_error` when every
 * attempt was lost). */
export async function streamExchange(
  api: Api,
  exchange: Exchange,
  handlers: StreamHandlers,
  policy: RetryPolicy = DEFAULT_RETRY,
): Promise<Schemas["TurnResponse"]> {
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1) handlers.onRetry(attempt);
    const outcome = await attemptOnce(api, exchange, handlers.onChunk);
    if ("reply" in outcome) return outcome.reply;
    if (attempt >= policy.attempts) {
      throw new ApiFailure(0, "network_error", "the connection was lost; try again");
    }
    await policy.sleep(policy.delayMs(attempt));
  }
}
