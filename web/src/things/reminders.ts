// The reminders and the inbox, per the wire contract agreed with the notifications work
// (docs/openapi.yaml once merged): the only file that knows their paths.
import type { RawCall } from "../api/raw";

export interface Reminder {
  id: string;
  text: string;
  due_at: string;
  time_zone: string;
  recurrence: string;
  state: "pending" | "fired" | "done" | "cancelled";
  urgent: boolean;
  etag: string;
  created_at: string;
  updated_at: string;
  completed_at?: string | null;
}

export type Snooze = "10m" | "1h" | "tomorrow_morning";

export interface Notification {
  id: string;
  kind: string;
  title: string;
  body: string;
  urgent: boolean;
  read: boolean;
  created_at: string;
  target: { chat_id?: string; reminder_id?: string; job_id?: string; question_id?: string };
}

const PAGE = 100;
const path = (id: string) => `/v1/reminders/${encodeURIComponent(id)}`;

export async function listReminders(call: RawCall, filter: "open" | "done"): Promise<Reminder[]> {
  const page = await call<{ reminders: Reminder[] }>("GET", `/v1/reminders?filter=${filter}&page_size=${PAGE}`);
  return page.reminders;
}

export const completeReminder = (call: RawCall, id: string) => call<Reminder>("POST", `${path(id)}:complete`);
export const snoozeReminder = (call: RawCall, id: string, snooze: Snooze) =>
  call<Reminder>("POST", `${path(id)}:snooze`, { snooze });
export const deleteReminder = (call: RawCall, id: string) => call<unknown>("DELETE", path(id));
export const editReminder = (call: RawCall, id: string, text: string) => call<Reminder>("PATCH", path(id), { text });

export async function listNotifications(call: RawCall, unreadOnly = false): Promise<Notification[]> {
  const filter = unreadOnly ? "filter=unread&" : "";
  const page = await call<{ notifications: Notification[] }>("GET", `/v1/notifications?${filter}page_size=${PAGE}`);
  return page.notifications;
}

export const markRead = (call: RawCall, id: string) =>
  call<Notification>("POST", `/v1/notifications/${encodeURIComponent(id)}:markRead`);
export const markAllRead = (call: RawCall) => call<unknown>("POST", "/v1/notifications:markAllRead");
export const clearNotifications = (call: RawCall) => call<unknown>("POST", "/v1/notifications:clear");

/** "Every Monday" and the like for the common rules; else "repeats". */
export function repeats(rule: string): string {
  if (!rule) return "";
  const freq = /FREQ=(\w+)/.exec(rule)?.[1];
  const days: Record<string, string> = { MO: "Monday", TU: "Tuesday", WE: "Wednesday", TH: "Thursday", FR: "Friday", SA: "Saturday", SU: "Sunday" };
  const byDay = /BYDAY=([A-Z,]+)/.exec(rule)?.[1];
  if (freq === "WEEKLY" && byDay) return `every ${byDay.split(",").map((d) => days[d] ?? d).join(", ")}`;
  const simple: Record<string, string> = { DAILY: "every day", WEEKLY: "every week", MONTHLY: "every month", YEARLY: "every year" };
  return (freq && simple[freq]) || "repeats";
}
