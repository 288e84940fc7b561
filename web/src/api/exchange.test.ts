import { describe, expect, it } from "vitest";
import { apiClient, ApiFailure, type TurnResponse } from "./client";
import { type RetryPolicy, streamExchange } from "./exchange";

const NO_WAIT: RetryPolicy = { attempts: 4, delayMs: () => 0, sleep: async () => {} };

const reply: TurnResponse = {
  chat_id: "c1",
  turn_id: "t1",
  reply: { text: "You said: hi", kind: "text" },
  interrupt: null,
};

function sse(...events: [string, unknown][]): string {
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

function streamOf(text: string, breakAfter = Infinity): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.slice(0, Math.min(bytes.length, breakAfter)));
      if (breakAfter < bytes.length) controller.error(new TypeError("network error"));
      else controller.close();
    },
  });
}

/** A fetch that answers from a script, recording each request body. */
function scripted(answers: (() => Response)[]) {
  const bodies: unknown[] = [];
  const urls: string[] = [];
  const fetchImpl = async (input: Request) => {
    urls.push(`${input.method} ${input.url}`);
    bodies.push(await input.clone().json());
    const next = answers.shift();
    if (!next) throw new Error("unscripted request");
    return next();
  };
  const api = apiClient(async () => "token", "http://web.test", fetchImpl as typeof fetch);
  return { api, bodies, urls };
}

const turn = { kind: "turn" as const, chat: "c1", body: { message: "hi", client_message_id: "m-1" } };
const streamed = (text: string, breakAfter?: number) => () =>
  new Response(streamOf(text, breakAfter), { headers: { "Content-Type": "text/event-stream" } });

describe("streamExchange", () => {
  it("hands on each chunk and returns the closing response", async () => {
    const { api } = scripted([
      streamed(sse(["chunk", { text: "You " }], ["chunk", { text: "said" }], ["done", reply])),
    ]);
    const chunks: string[] = [];
    const got = await streamExchange(api, turn, { onChunk: (t) => chunks.push(t), onRetry: () => {} }, NO_WAIT);
    expect(chunks).toEqual(["You ", "said"]);
    expect(got).toEqual(reply);
  });

  it("retries a lost connection with the same client_message_id", async () => {
    const full = sse(["chunk", { text: "You " }], ["done", reply]);
    const { api, bodies } = scripted([
      () => {
        throw new TypeError("Failed to fetch");
      },
      streamed(full, 10), // broken mid-stream
      streamed(full),
    ]);
    const retries: number[] = [];
    const got = await streamExchange(api, turn, { onChunk: () => {}, onRetry: (n) => retries.push(n) }, NO_WAIT);
    expect(got.reply.text).toBe("You said: hi");
    expect(bodies).toHaveLength(3);
    expect(new Set(bodies.map((b) => (b as { client_message_id: string }).client_message_id))).toEqual(
      new Set(["m-1"]),
    );
    expect(retries).toEqual([2, 3]);
  });

  it("waits out turn_in_progress, then takes the recorded reply", async () => {
    const busy = { error: { code: "turn_in_progress", message: "still running" } };
    const { api, bodies } = scripted([
      () => Response.json(busy, { status: 409 }),
      streamed(sse(["done", reply])),
    ]);
    const got = await streamExchange(api, turn, { onChunk: () => {}, onRetry: () => {} }, NO_WAIT);
    expect(got.turn_id).toBe("t1");
    expect(bodies).toEqual([turn.body, turn.body]);
  });

  it("reports a refusal and an in-band error with their codes, without retrying", async () => {
    const answered = { error: { code: "interrupt_not_pending", message: "answered" } };
    const { api, bodies, urls } = scripted([
      () => Response.json(answered, { status: 409 }),
      streamed(sse(["chunk", { text: "x" }], ["error", { code: "dependency_unavailable", message: "down" }])),
    ]);
    const answer = { kind: "resume" as const, chat: "c1", question: "i1", body: { answer: "1" } };
    const handlers = { onChunk: () => {}, onRetry: () => {} };
    await expect(streamExchange(api, answer, handlers, NO_WAIT)).rejects.toMatchObject({
      status: 409,
      code: "interrupt_not_pending",
    });
    await expect(streamExchange(api, turn, handlers, NO_WAIT)).rejects.toMatchObject({
      code: "dependency_unavailable",
      message: "down",
    });
    expect(bodies).toEqual([{ answer: "1" }, turn.body]);
    expect(urls).toEqual([
      "POST http://web.test/v1/chats/c1/questions/i1:answer",
      "POST http://web.test/v1/chats/c1/messages",
    ]);
  });

  it("gives up after the last attempt with network_error", async () => {
    const lost = () => {
      throw new TypeError("Failed to fetch");
    };
    const { api, bodies } = scripted([lost, lost, lost, lost]);
    const failure = await streamExchange(api, turn, { onChunk: () => {}, onRetry: () => {} }, NO_WAIT).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ApiFailure);
    expect((failure as ApiFailure).code).toBe("network_error");
    expect(bodies).toHaveLength(4);
  });
});
