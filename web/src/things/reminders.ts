// The reminders, the inbox and push registration (docs/openapi.yaml: the notifications
// work's contract), typed by the generated schema like every other call.
import { type Api, type Schemas, failureFrom, ok } from "../api/client";

export type Reminder = Schemas["Reminder"];
export type Notification = Schemas["Notification"];
export type Snooze = Schemas["SnoozeRequest"]["snooze"];

const PAGE = 100;

/** A call answered 204 (no body): nothing, or the product's failure. */
async function done(call: Promise<{ error?: unknown; response: Response }>): Promise<void> {
  await ok(call.then((r) => ({ ...r, data: r.response.ok ? {} : undefined })));
}

export async function listReminders(api: Api, filter: "open" | "done"): Promise<Reminder[]> {
  return (await ok(api.GET("/v1/reminders", { params: { query: { filter, page_size: PAGE } } }))).reminders;
}

const path = (reminder: string) => ({ params: { path: { reminder } } });
export const completeReminder = (api: Api, id: string) => ok(api.POST("/v1/reminders/{reminder}:complete", path(id)));
export const snoozeReminder = (api: Api, id: string, snooze: Snooze) =>
  ok(api.POST("/v1/reminders/{reminder}:snooze", { ...path(id), body: { snooze } }));
export const deleteReminder = (api: Api, id: string) => done(api.DELETE("/v1/reminders/{reminder}", path(id)));

/** A new text and time, only if nobody changed it since it was read (else 412 stale_etag). */
export const editReminder = (api: Api, reminder: Reminder, change: { text: string; due_at: string }) =>
  ok(
    api.PATCH("/v1/reminders/{reminder}", {
      params: { path: { reminder: reminder.id }, header: { "If-Match": `"${reminder.etag}"` } },
      body: change,
    }),
  );

export async function listNotifications(api: Api, unreadOnly = false): Promise<Notification[]> {
  const query = unreadOnly ? { filter: "unread" as const, page_size: PAGE } : { page_size: PAGE };
  return (await ok(api.GET("/v1/notifications", { params: { query } }))).notifications;
}

export const markRead = (api: Api, notification: string) =>
  ok(api.POST("/v1/notifications/{notification}:markRead", { params: { path: { notification } } }));
export const markAllRead = (api: Api) => ok(api.POST("/v1/notifications:markAllRead", {}));
export const clearNotifications = (api: Api) => ok(api.POST("/v1/notifications:clear", {}));

export async function pushKey(api: Api): Promise<string> {
  return (await ok(api.GET("/v1/pushConfig"))).web_push_public_key;
}

export async function registerWebPush(api: Api, subscription: PushSubscriptionJSON): Promise<void> {
  const { endpoint, keys } = subscription;
  if (!endpoint || !keys?.p256dh || !keys.auth) throw failureFrom(0, null);
  await ok(api.POST("/v1/devices", { body: { kind: "web_push", web_push: { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } } } }));
}

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
