import { describe, expect, it } from "vitest";
import { addDays, addMonths, dateIn, instantOf, localOf, money, startOfDay } from "./format";

describe("times in the user's zone", () => {
  it("finds midnight in Zurich", () => {
    expect(startOfDay("2026-11-21", "Europe/Zurich").toISOString()).toBe("2026-11-20T23:00:00.000Z");
    expect(startOfDay("2026-07-01", "Europe/Zurich").toISOString()).toBe("2026-06-30T22:00:00.000Z");
  });
  it("dates an instant in its zone", () => {
    expect(dateIn(new Date("2026-10-31T23:30:00Z"), "Europe/Zurich")).toBe("2026-11-01");
  });
  it("reads and writes wall times in a zone", () => {
    expect(instantOf("2026-11-29T10:00", "Europe/Zurich").toISOString()).toBe("2026-11-29T09:00:00.000Z");
    expect(instantOf("2026-07-01T10:00", "Europe/Zurich").toISOString()).toBe("2026-07-01T08:00:00.000Z");
    expect(localOf("2026-11-29T09:00:00Z", "Europe/Zurich")).toBe("2026-11-29T10:00");
  });
  it("steps days and months", () => {
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
    expect(addMonths("2026-01", -1)).toBe("2025-12");
  });
});

describe("amounts", () => {
  it("reads minor units in the currency's digits", () => {
    expect(money(1250, "CHF")).toContain("12.50");
    expect(money(1250, "JPY")).toContain("1,250");
  });
});
