import { describe, expect, it } from "vitest";
import { SseParser } from "./sse";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("SseParser", () => {
  it("joins events split anywhere, CRLF included, and skips comments and unknown names", () => {
    const parser = new SseParser();
    const wire = ': keep-alive\r\n\r\nevent: chunk\r\ndata: {"text":"a b"}\r\n\r\nevent: other\ndata: 1\n\nevent: done\ndata: {"chat_id":"c"}\n\n';
    const events = [];
    for (let i = 0; i < wire.length; i += 7) events.push(...parser.push(bytes(wire.slice(i, i + 7))));
    expect(events).toEqual([
      { event: "chunk", data: { text: "a b" } },
      { event: "done", data: { chat_id: "c" } },
    ]);
  });

  it("keeps a multi-byte character split between two pieces", () => {
    const parser = new SseParser();
    const all = bytes('event: chunk\ndata: {"text":"Grüezi"}\n\n');
    const cut = all.indexOf(0xc3) + 1; // inside "ü"
    expect(parser.push(all.slice(0, cut))).toEqual([]);
    expect(parser.push(all.slice(cut))).toEqual([{ event: "chunk", data: { text: "Grüezi" } }]);
  });
});
