import { type FormEvent, useCallback, useId, useState } from "react";
import type { Api } from "../api/client";
import { Failure, useAct, useLoad } from "../memory/useLoad";
import { type Place, instantOf, localOf, when } from "./format";
import { type Reminder, type Snooze, completeReminder, deleteReminder, editReminder, listReminders, repeats, snoozeReminder } from "./reminders";

const SNOOZES: [Snooze, string][] = [
  ["10m", "10 minutes"],
  ["1h", "1 hour"],
  ["tomorrow_morning", "Tomorrow morning"],
];

/** The user's reminders, open or done: mark done, snooze, delete. */
export function Reminders({ api, place }: { api: Api; place: Place }) {
  const [filter, setFilter] = useState<"open" | "done">("open");
  const load = useCallback(() => listReminders(api, filter), [api, filter]);
  const { data, failure, reload, setFailure } = useLoad(load);
  const { status, act } = useAct(reload, setFailure);

  return (
    <section className="view" aria-labelledby="reminders-title">
      <h1 id="reminders-title">Reminders</h1>
      <div className="segmented" role="group" aria-label="Show">
        {(["open", "done"] as const).map((f) => (
          <button key={f} type="button" aria-pressed={filter === f} onClick={() => setFilter(f)}>
            {f === "open" ? "Open" : "Done"}
          </button>
        ))}
      </div>
      <p role="status" className="hint">
        {status}
      </p>
      <Failure failure={failure} />
      {data && data.length === 0 && (
        <p className="empty">{filter === "open" ? "Nothing to remember. Ask in the chat: “remind me to…”." : "Nothing done yet."}</p>
      )}
      <ul className="things">
        {data?.map((r) => (
          <ReminderItem
            key={r.id}
            reminder={r}
            place={place}
            onDone={() => void act(() => completeReminder(api, r.id), `Done: ${r.text}`)}
            onSnooze={(s, label) => void act(() => snoozeReminder(api, r.id, s), `Snoozed for ${label.toLowerCase()}: ${r.text}`)}
            onDelete={() => void act(() => deleteReminder(api, r.id), `Deleted: ${r.text}`)}
            onEdit={(text, due) => void act(() => editReminder(api, r, { text, due_at: due }), `Changed: ${text}`)}
          />
        ))}
      </ul>
    </section>
  );
}

interface ItemProps {
  reminder: Reminder;
  place: Place;
  onDone: () => void;
  onSnooze: (snooze: Snooze, label: string) => void;
  onDelete: () => void;
  onEdit: (text: string, dueAt: string) => void;
}

function ReminderItem({ reminder: r, place, onDone, onSnooze, onDelete, onEdit }: ItemProps) {
  const [snoozing, setSnoozing] = useState(false);
  const [editing, setEditing] = useState(false);
  const id = useId();
  const open = r.state === "pending" || r.state === "fired";
  const zone = { ...place, timeZone: r.time_zone || place.timeZone };
  const [text, setText] = useState(r.text);
  const [due, setDue] = useState(() => localOf(r.due_at, zone.timeZone));

  function save(event: FormEvent) {
    event.preventDefault();
    if (!text.trim() || !due) return;
    setEditing(false);
    onEdit(text.trim(), instantOf(due, zone.timeZone).toISOString());
  }
  return (
    <li className="thing" data-reminder={r.id} aria-labelledby={`${id}-text`}>
      <p id={`${id}-text`} className="thing-title">
        {r.urgent && <span className="badge">urgent</span>} {r.text}
      </p>
      <p className="hint">
        {open ? `Due ${when(r.due_at, zone)}` : `Done ${r.completed_at ? when(r.completed_at, zone) : ""}`}
        {r.recurrence && ` · ${repeats(r.recurrence)}`}
      </p>
      {open && (
        <div className="actions">
          <button type="button" onClick={onDone} aria-label={`Mark done: ${r.text}`}>
            Mark done
          </button>
          <button type="button" aria-expanded={snoozing} onClick={() => setSnoozing(!snoozing)} aria-label={`Snooze: ${r.text}`}>
            Snooze
          </button>
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)} aria-label={`Edit: ${r.text}`}>
            Edit
          </button>
          <button type="button" className="danger" onClick={onDelete} aria-label={`Delete: ${r.text}`}>
            Delete
          </button>
        </div>
      )}
      {editing && (
        <form className="stacked" onSubmit={save} aria-label={`Edit “${r.text}”`}>
          <label htmlFor={`${id}-edit-text`}>What</label>
          <input id={`${id}-edit-text`} value={text} onChange={(e) => setText(e.target.value)} maxLength={200} required />
          <label htmlFor={`${id}-edit-due`}>When ({zone.timeZone})</label>
          <input id={`${id}-edit-due`} type="datetime-local" value={due} onChange={(e) => setDue(e.target.value)} required />
          <button type="submit">Save</button>
        </form>
      )}
      {snoozing && (
        <div className="actions" role="group" aria-label={`Snooze “${r.text}” for`}>
          {SNOOZES.map(([value, label]) => (
            <button key={value} type="button" onClick={() => onSnooze(value, label)}>
              {label}
            </button>
          ))}
        </div>
      )}
    </li>
  );
}
