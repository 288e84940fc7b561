// Times in the user's zone and amounts in their currency and locale (the assistant profile's
// `timezone` and `currency`; the browser's locale for the rest).
export interface Place {
  timeZone: string;
  currency: string | null;
}

export const BROWSER_PLACE: Place = {
  timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
  currency: null,
};

export function when(iso: string, place: Place): string {
  return new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: place.timeZone }).format(
    new Date(iso),
  );
}

export function time(iso: string, place: Place): string {
  return new Intl.DateTimeFormat(undefined, { timeStyle: "short", timeZone: place.timeZone }).format(new Date(iso));
}

export function day(date: Date, place: Place): string {
  return new Intl.DateTimeFormat(undefined, { weekday: "long", day: "numeric", month: "long", timeZone: place.timeZone }).format(
    date,
  );
}

export function monthName(month: string): string {
  const [year, number] = month.split("-").map(Number);
  return new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric", timeZone: "UTC" }).format(
    new Date(Date.UTC(year ?? 2000, (number ?? 1) - 1, 15)),
  );
}

/** An amount of a currency's minor unit (cents) as the locale writes it: "CHF 12.50". */
export function money(minor: number, currency: string): string {
  const format = new Intl.NumberFormat(undefined, { style: "currency", currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

/** The calendar date (YYYY-MM-DD) of an instant in a zone. */
export function dateIn(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(instant);
}

/** The instant a zone's calendar date begins (midnight there), found by correcting the
 * zone's offset once (right except in the hour a clock change skips). */
export function startOfDay(date: string, timeZone: string): Date {
  const guess = new Date(`${date}T00:00:00Z`);
  const offset = zoneOffsetMinutes(guess, timeZone);
  return new Date(guess.getTime() - offset * 60_000);
}

function zoneOffsetMinutes(instant: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  }).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"));
  return Math.round((asUtc - instant.getTime()) / 60_000);
}

/** The instant a zone's wall time ("2026-11-29T10:00") names. */
export function instantOf(local: string, timeZone: string): Date {
  const guess = new Date(`${local}:00Z`);
  const offset = zoneOffsetMinutes(guess, timeZone);
  const first = new Date(guess.getTime() - offset * 60_000);
  // Again from the first answer: right on the far side of a clock change too.
  return new Date(guess.getTime() - zoneOffsetMinutes(first, timeZone) * 60_000);
}

/** An instant as a zone's wall time, the value of an `<input type="datetime-local">`. */
export function localOf(iso: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  }).formatToParts(new Date(iso));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "00";
  return `${get("year")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}`;
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function currentMonth(place: Place, now = new Date()): string {
  return dateIn(now, place.timeZone).slice(0, 7);
}

export function addMonths(month: string, delta: number): string {
  const [year, number] = month.split("-").map(Number);
  const d = new Date(Date.UTC(year ?? 2000, (number ?? 1) - 1 + delta, 1));
  return d.toISOString().slice(0, 7);
}
