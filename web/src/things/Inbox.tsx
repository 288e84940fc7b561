import { useCallback, useEffect, useRef, useState } from "react";
import type { Api, ApiFailure } from "../api/client";
import { Failure, useAct, useLoad } from "../memory/useLoad";
import { plain } from "../words";
import { type Place, when } from "./format";
import { pushSupported, turnOnPush } from "./push";
import { type Notification as Note, clearNotifications, listNotifications, markAllRead, markRead } from "./reminders";

const POLL_MS = 20_000;

/** Where a notification leads: its chat, or the reminders. */
export function targetUrl(n: Note): string {
  if (n.target.chat_id) return `/?chat=${encodeURIComponent(n.target.chat_id)}`;
  if (n.target.reminder_id) return "/#reminders";
  return "/#inbox";
}

/** Keeps the unread count fresh while the page is open, and shows a system notification for
 * each new one when the person allowed them and is looking elsewhere. */
export function useUnread(api: Api) {
  const [unread, setUnread] = useState(0);
  const seen = useRef<Set<string> | null>(null);
  useEffect(() => {
    let stopped = false;
    async function check() {
      const fresh = await listNotifications(api, true).catch(() => null);
      if (!fresh || stopped) return;
      setUnread(fresh.length);
      const known = seen.current;
      seen.current = new Set(fresh.map((n) => n.id));
      if (!known || !("Notification" in window) || Notification.permission !== "granted" || !document.hidden) return;
      for (const n of fresh.filter((f) => !known.has(f.id))) {
        const shown = new Notification(plain(n.title), { body: plain(n.body), tag: n.id });
        shown.onclick = () => {
          window.focus();
          window.location.assign(targetUrl(n));
        };
      }
    }
    void check();
    const timer = setInterval(() => void check(), POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [api]);
  return unread;
}

/** What the assistant let the person know: reminders due, questions waiting, tasks done. */
export function Inbox({ api, place }: { api: Api; place: Place }) {
  const load = useCallback(() => listNotifications(api), [api]);
  const { data, failure, reload, setFailure } = useLoad(load);
  const { status, setStatus, act } = useAct(reload, setFailure);

  async function enablePush() {
    try {
      setStatus((await turnOnPush(api)) ? "Notifications are on for this device." : "Notifications stay off: the browser said no.");
    } catch (error) {
      setFailure(error as ApiFailure);
    }
  }

  return (
    <section className="view" aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      <div className="actions">
        {pushSupported() && (
          <button type="button" onClick={() => void enablePush()}>
            Notify me on this device
          </button>
        )}
        <button type="button" onClick={() => void act(() => markAllRead(api), "All marked read.")} disabled={!data?.length}>
          Mark all read
        </button>
        <button type="button" className="danger" onClick={() => void act(() => clearNotifications(api), "Inbox cleared.")} disabled={!data?.length}>
          Clear all
        </button>
      </div>
      <p role="status" className="hint">
        {status}
      </p>
      <Failure failure={failure} />
      {data && data.length === 0 && <p className="empty">Nothing new.</p>}
      <ul className="things">
        {data?.map((n) => (
          <li key={n.id} className={`thing${n.read ? "" : " unread"}`}>
            <p className="thing-title">
              {!n.read && <span className="visually-hidden">Unread: </span>}
              {n.urgent && <span className="badge">urgent</span>} {plain(n.title)}
            </p>
            {n.body && <p>{plain(n.body)}</p>}
            <p className="hint">{when(n.created_at, place)}</p>
            <div className="actions">
              <a className="button" href={targetUrl(n)} onClick={() => void markRead(api, n.id).catch(() => undefined)}>
                Open
              </a>
              {!n.read && (
                <button type="button" onClick={() => void act(() => markRead(api, n.id), "Marked read.")} aria-label={`Mark read: ${plain(n.title)}`}>
                  Mark read
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
