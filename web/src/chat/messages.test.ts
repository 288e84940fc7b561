import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../api/client";
import { actionsFor, finishedJobs, mergeMessages, micros, newClientMessageId, newestTime, seenQuestion } from "./messages";

const message = (id: string, at: string, text = id): ChatMessage => ({
  id,
  role: "assistant",
  text,
  created_at: `2026-03-01T12:00:${at}Z`,
  kind: "text",
  question_id: null,
});

describe("chat helpers", () => {
  it("merges polled messages once each, in time order, a repeat replacing the older copy", () => {
    const known = [message("a", "01"), message("c", "03")];
    const merged = mergeMessages(known, [message("b", "02"), message("c", "03", "new text")]);
    expect(merged.map((m) => [m.id, m.text])).toEqual([
      ["a", "a"],
      ["b", "b"],
      ["c", "new text"],
    ]);
    expect(newestTime(merged)).toBe("2026-03-01T12:00:03Z");
    expect(newestTime([])).toBeNull();
  });

  it("orders a reply stored one microsecond after its message, whatever the ids", () => {
    const said = { ...message("web-1", "05"), role: "user" as const };
    const reply = { ...message("turn-a", "05.000001"), role: "assistant" as const };
    expect(mergeMessages([], [reply, said]).map((m) => m.id)).toEqual(["web-1", "turn-a"]);
    expect(micros("2026-03-01T12:00:05.000001Z") - micros("2026-03-01T12:00:05Z")).toBe(1);
    expect(micros("2026-03-01T13:00:05.5+01:00")).toBe(micros("2026-03-01T12:00:05.500000Z"));
  });

  it("offers only the controls the job's state accepts", () => {
    expect(actionsFor("running")).toEqual(["pause", "cancel", "takeover"]);
    expect(actionsFor("paused")).toEqual(["resume", "cancel", "takeover"]);
    expect(actionsFor("done")).toEqual([]);
    expect(actionsFor("cancelled")).toEqual([]);
  });

  it("sees a job finished once its result message arrived", () => {
    const messages = [message("job1-s1", "01"), message("job1-result", "02"), message("job2-s1", "03")];
    expect(finishedJobs(messages, ["job1", "job2"])).toEqual(new Set(["job1"]));
  });

  it("makes client message ids the server's pattern accepts, never twice the same", () => {
    const ids = new Set(Array.from({ length: 50 }, newClientMessageId));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/);
  });
});

describe("seenQuestion", () => {
  const said = (text: string, kind: ChatMessage["kind"] = "text", question_id: string | null = null): ChatMessage => ({
    ...message("m", "00", text),
    kind,
    question_id,
  });
  const asked = new Map([["q1", "approval"]]);

  it("ties a question to the card seen open by its id, however it is worded", () => {
    expect(seenQuestion(said("Shall I go ahead?\n1. Yes, go ahead\n2. No", "question", "q1"), asked)).toBe("approval");
    expect(seenQuestion(said("Something put quite differently", "question", "q1"), asked)).toBe("approval");
  });
  it("takes no reply for a question by its text", () => {
    expect(seenQuestion(said("Here is the plan:\n1. Book\n2. Pack"), asked)).toBeNull();
    expect(seenQuestion(said("Shall I go ahead?\n1. Yes, go ahead\n2. No", "progress"), asked)).toBeNull();
  });
  it("leaves a question whose card this page never saw as it was said", () => {
    expect(seenQuestion(said("Which Anna?", "question", "q2"), asked)).toBeNull();
  });
});
