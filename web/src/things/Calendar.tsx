import { type FormEvent, useCallback, useId, useState } from "react";
import { type Api, type ApiFailure, type Schemas, ok } from "../api/client";
import { Failure, useLoad } from "../memory/useLoad";
import { type Place, addDays, dateIn, day, instantOf, localOf, startOfDay, time } from "./format";

type CalendarEvent = Schemas["CalendarEvent"];

/** The user's calendar entries of a day or a week, in their time zone. */
export function Calendar({ api, place }: { api: Api; place: Place }) {
  const [span, setSpan] = useState<1 | 7>(7);
  const [first, setFirst] = useState(() => dateIn(new Date(), place.timeZone));
  const load = useCallback(async () => {
    const query = {
      start: startOfDay(first, place.timeZone).toISOString(),
      end: startOfDay(addDays(first, span), place.timeZone).toISOString(),
      page_size: 500,
    };
    return (await ok(api.GET("/v1/calendarEvents", { params: { query } }))).calendar_events;
  }, [api, first, span, place.timeZone]);
  const { data, failure, reload, setFailure } = useLoad(load);
  const [status, setStatus] = useState("");

  async function edit(event: CalendarEvent, change: Change) {
    try {
      const params = { path: { event: event.id } };
      await ok(api.PATCH("/v1/calendarEvents/{event}", { params, body: { ...change, etag: event.etag } }));
      setStatus(`Saved: ${change.title}`);
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    await reload();
  }

  async function remove(event: CalendarEvent) {
    try {
      await ok(api.DELETE("/v1/calendarEvents/{event}", { params: { path: { event: event.id } } }));
      setStatus(`Deleted: ${event.title}`);
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    await reload();
  }

  const days = Array.from({ length: span }, (_, i) => addDays(first, i));
  const byDay = (date: string) => (data ?? []).filter((e) => dateIn(new Date(e.start), place.timeZone) === date);
  return (
    <section className="view" aria-labelledby="calendar-title">
      <h1 id="calendar-title">Calendar</h1>
      <div className="toolbar">
        <div className="segmented" role="group" aria-label="Show">
          <button type="button" aria-pressed={span === 1} onClick={() => setSpan(1)}>
            Day
          </button>
          <button type="button" aria-pressed={span === 7} onClick={() => setSpan(7)}>
            Week
          </button>
        </div>
        <div className="actions">
          <button type="button" onClick={() => setFirst(addDays(first, -span))} aria-label={span === 1 ? "Previous day" : "Previous week"}>
            ‹
          </button>
          <button type="button" onClick={() => setFirst(dateIn(new Date(), place.timeZone))}>
            Today
          </button>
          <button type="button" onClick={() => setFirst(addDays(first, span))} aria-label={span === 1 ? "Next day" : "Next week"}>
            ›
          </button>
        </div>
      </div>
      <p role="status" className="hint">
        {status}
      </p>
      <Failure failure={failure} />
      {days.map((date) => {
        const events = byDay(date);
        const heading = day(startOfDay(date, place.timeZone), place);
        return (
          <section key={date} className="day" aria-label={heading}>
            <h2>{heading}</h2>
            {events.length === 0 ? (
              <p className="empty">Nothing planned.</p>
            ) : (
              <ul className="things">
                {events.map((e) => (
                  <EventItem key={`${e.id}-${e.etag}`} event={e} place={place} onEdit={(c) => void edit(e, c)} onDelete={() => void remove(e)} />
                ))}
              </ul>
            )}
          </section>
        );
      })}
    </section>
  );
}

interface Change {
  title: string;
  start: string;
  end: string;
  location?: string;
}

interface ItemProps {
  event: CalendarEvent;
  place: Place;
  onEdit: (change: Change) => void;
  onDelete: () => void;
}

function EventItem({ event: e, place, onEdit, onDelete }: ItemProps) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(e.title);
  const [start, setStart] = useState(() => localOf(e.start, place.timeZone));
  const [end, setEnd] = useState(() => localOf(e.end, place.timeZone));
  const [location, setLocation] = useState(e.location ?? "");
  const id = useId();

  function save(event: FormEvent) {
    event.preventDefault();
    setEditing(false);
    const change: Change = {
      title: title.trim(),
      start: instantOf(start, place.timeZone).toISOString(),
      end: instantOf(end, place.timeZone).toISOString(),
    };
    onEdit(location.trim() ? { ...change, location: location.trim() } : change);
  }

  return (
    <li className="thing">
      <p className="thing-title">{e.title}</p>
      <p className="hint">
        {time(e.start, place)}–{time(e.end, place)}
        {e.location && ` · ${e.location}`}
      </p>
      <div className="actions">
        <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)} aria-label={`Edit: ${e.title}`}>
          Edit
        </button>
        <button type="button" className="danger" onClick={onDelete} aria-label={`Delete: ${e.title}`}>
          Delete
        </button>
      </div>
      {editing && (
        <form className="stacked" onSubmit={save} aria-label={`Edit “${e.title}”`}>
          <label htmlFor={`${id}-title`}>Title</label>
          <input id={`${id}-title`} value={title} onChange={(v) => setTitle(v.target.value)} maxLength={200} required />
          <label htmlFor={`${id}-start`}>Starts ({place.timeZone})</label>
          <input id={`${id}-start`} type="datetime-local" value={start} onChange={(v) => setStart(v.target.value)} required />
          <label htmlFor={`${id}-end`}>Ends</label>
          <input id={`${id}-end`} type="datetime-local" value={end} min={start} onChange={(v) => setEnd(v.target.value)} required />
          <label htmlFor={`${id}-where`}>Where</label>
          <input id={`${id}-where`} value={location} onChange={(v) => setLocation(v.target.value)} maxLength={200} />
          <button type="submit">Save</button>
        </form>
      )}
    </li>
  );
}
