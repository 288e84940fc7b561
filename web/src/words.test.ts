import { describe, expect, it } from "vitest";
import { failureText, plain, requirement } from "./words";

describe("plain", () => {
  it("drops the agent's name before the goal", () => {
    expect(plain("Shall I go ahead with this? productivity: What are my reminders?")).toBe(
      "Shall I go ahead with this? What are my reminders?",
    );
  });
  it("drops the agents listed in parentheses", () => {
    expect(plain("I've started on it (productivity, wealth) and will post the result here.")).toBe(
      "I've started on it and will post the result here.",
    );
  });
  it("says what a tool does", () => {
    expect(plain("For “Email Bea”, may I run email_send?")).toBe("For “Email Bea”, may I send this email?");
  });
  it("turns an error code into a sentence", () => {
    expect(plain("I stopped working on “x”: step_limit: no answer after 8 steps.")).toBe(
      "I stopped working on “x”: it took more steps than I allow for one task.",
    );
    expect(plain("It failed (step_limit)")).toBe("It failed (it took more steps than I allow for one task)");
  });
  it("says why a task stopped", () => {
    expect(plain("I stopped working on “Email Bea”: action_refused: email_send not approved.")).toBe(
      "I stopped working on “Email Bea”: a step it needed was not approved.",
    );
  });
  it("rounds raw floats to percentages", () => {
    expect(plain("success rate: 0.6666666666666666 of 0.9")).toBe("success rate: 67% of 0.9");
  });
  it("leaves ordinary words alone", () => {
    expect(plain("I did some research on wealth management.")).toBe("I did some research on wealth management.");
  });
});

describe("words for numbers and failures", () => {
  it("shows a rate as percentages", () => {
    expect(requirement("success_rate", 0.6666666666666666, 0.9)).toBe("success rate: 67% of 90%");
    expect(requirement("tasks_completed", null, 5)).toBe("tasks completed: none yet of 5");
  });
  it("never shows the code", () => {
    expect(failureText({ code: "rate_limited", message: "429" })).toBe(
      "That was a lot at once; wait a minute and try again.",
    );
    expect(failureText({ code: "weird_new_code", message: "" })).toBe("Something went wrong.");
  });
});
