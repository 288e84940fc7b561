// Server-Sent Events read from a POST's body (EventSource can only GET).
import type { Schemas } from "./client";

export type TurnEvent =
  | { event: "chunk"; data: Schemas["TextChunk"] }
  | { event: "done" | "interrupt"; data: Schemas["TurnResponse"] }
  | { event: "error"; data: Schemas["ErrorBody"] };

const NAMES = new Set(["chunk", "done", "interrupt", "error"]);

/** Splits a byte stream into events; `push` returns the events completed by a piece. */
export class SseParser {
  private buffer = "";
  private readonly decoder = new TextDecoder();

  push(bytes: Uint8Array): TurnEvent[] {
    this.buffer += this.decoder.decode(bytes, { stream: true }).replace(/\r\n?/g, "\n");
    const events: TurnEvent[] = [];
    let end = this.buffer.indexOf("\n\n");
    while (end >= 0) {
      const event = parseBlock(this.buffer.slice(0, end));
      if (event) events.push(event);
      this.buffer = this.buffer.slice(end + 2);
      end = this.buffer.indexOf("\n\n");
    }
    return events;
  }
}

function parseBlock(block: string): TurnEvent | null {
  let name = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue; // a comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (!NAMES.has(name) || data.length === 0) return null;
  return { event: name, data: JSON.parse(data.join("\n")) } as TurnEvent;
}

/** Reads events until a closing one (`done`, `interrupt`, `error`), handing chunks on.
 * Returns null when the stream ends without one (the connection was lost). */
export async function readUntilClosed(
  body: ReadableStream<Uint8Array>,
  onChunk: (text: string) => void,
): Promise<Exclude<TurnEvent, { event: "chunk" }> | null> {
  const reader = body.getReader();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return null;
      for (const event of parser.push(value)) {
        if (event.event === "chunk") onChunk(event.data.text);
        else return event;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
