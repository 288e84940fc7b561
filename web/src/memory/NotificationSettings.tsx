import { type FormEvent, useCallback, useId, useState } from "react";
import { type Api, type ApiFailure, type Schemas, ok } from "../api/client";
import { Failure, useLoad } from "./useLoad";

type Kinds = Schemas["NotificationKinds"];
type Settings = Schemas["NotificationSettings"];

const KINDS: [keyof Kinds, string][] = [
  ["reminder_due", "A reminder is due"],
  ["approval_waiting", "A question waits for me (and before it expires)"],
  ["job_done", "A task is done"],
  ["job_failed", "A task could not finish"],
  ["escalation", "A task needs me to step in"],
  ["email_failed", "An email could not be sent"],
];

/** Which notifications reach this person's devices, and their quiet hours. */
export function NotificationSettings({ api }: { api: Api }) {
  const load = useCallback(() => ok(api.GET("/v1/settings/notifications")), [api]);
  const { data, failure, reload, setFailure } = useLoad(load);
  const id = useId();
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Notifications</h2>
      <Failure failure={failure} />
      {data && <Form key={data.etag} api={api} settings={data} onSaved={reload} onFailure={setFailure} />}
    </section>
  );
}

interface FormProps {
  api: Api;
  settings: Settings;
  onSaved: () => Promise<void>;
  onFailure: (failure: ApiFailure) => void;
}

function Form({ api, settings, onSaved, onFailure }: FormProps) {
  const id = useId();
  const [kinds, setKinds] = useState<Kinds>(settings.kinds);
  const [quiet, setQuiet] = useState(settings.quiet_hours !== null && settings.quiet_hours !== undefined);
  const [start, setStart] = useState(settings.quiet_hours?.start ?? "22:00");
  const [end, setEnd] = useState(settings.quiet_hours?.end ?? "07:00");
  const [saved, setSaved] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setSaved(false);
    try {
      const body = { kinds, quiet_hours: quiet ? { start, end } : null, etag: settings.etag };
      await ok(api.PATCH("/v1/settings/notifications", { body }));
      setSaved(true);
      await onSaved();
    } catch (error) {
      onFailure(error as ApiFailure);
    }
  }

  return (
    <form className="stacked" onSubmit={submit}>
      <fieldset>
        <legend>Tell me when</legend>
        {KINDS.map(([kind, label]) => (
          <label key={kind} className="check">
            <input type="checkbox" checked={kinds[kind] !== false} onChange={(e) => setKinds({ ...kinds, [kind]: e.target.checked })} />
            {label}
          </label>
        ))}
      </fieldset>
      <label className="check">
        <input type="checkbox" checked={quiet} onChange={(e) => setQuiet(e.target.checked)} />
        Quiet hours (urgent ones still ring)
      </label>
      {quiet && (
        <div className="inline">
          <label htmlFor={`${id}-start`}>From</label>
          <input id={`${id}-start`} type="time" value={start} onChange={(e) => setStart(e.target.value)} required />
          <label htmlFor={`${id}-end`}>to</label>
          <input id={`${id}-end`} type="time" value={end} onChange={(e) => setEnd(e.target.value)} required />
        </div>
      )}
      <p className="hint">In {settings.time_zone}.</p>
      <button type="submit">Save notifications</button>
      {saved && <p role="status">Saved.</p>}
    </form>
  );
}
