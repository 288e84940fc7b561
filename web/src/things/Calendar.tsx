import { useCallback, useState } from "react";
import { type Api, type ApiFailure, type Schemas, ok } from "../api/client";
import { Failure, useLoad } from "../memory/useLoad";
import { type Place, addDays, dateIn, day, startOfDay, time } from "./format";

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
                  <li key={e.id} className="thing">
                    <p className="thing-title">{e.title}</p>
                    <p className="hint">
                      {time(e.start, place)}–{time(e.end, place)}
                      {e.location && ` · ${e.location}`}
                    </p>
                    <div className="actions">
                      <button type="button" className="danger" onClick={() => void remove(e)} aria-label={`Delete: ${e.title}`}>
                        Delete
                      </button>
                    </div>
                  </li>
                ))}
              </ul>
            )}
          </section>
        );
      })}
    </section>
  );
}
