import { type FormEvent, useCallback, useId, useState } from "react";
import { type Api, ApiFailure, type Schemas, ok } from "../api/client";
import { requirement } from "../words";
import { Failure, useLoad } from "./useLoad";

type Profile = Schemas["AssistantProfile"];
type Mode = Schemas["HitlMode"];
const MODES: Record<Mode, string> = {
  human_in_command: "I approve every action",
  human_in_the_loop: "I approve sensitive, costly or uncertain actions",
  human_on_the_loop: "Only tell me (sensitive actions still ask)",
};

/** The assistant's persona, tone, language, time zone, currency, rules and privacy mode. */
export function AssistantProfile({ api }: { api: Api }) {
  const load = useCallback(async () => await ok(api.GET("/v1/settings/assistant")), [api]);
  const { data, failure, setFailure, reload } = useLoad(load);
  if (!data) return <Failure failure={failure} />;
  return <ProfileForm key={data.updated_at ?? "defaults"} api={api} profile={data} failure={failure} onSaved={reload} onFailure={setFailure} />;
}

interface FormProps {
  api: Api;
  profile: Profile;
  failure: ApiFailure | null;
  onSaved: () => Promise<void>;
  onFailure: (f: ApiFailure) => void;
}

function ProfileForm({ api, profile, failure, onSaved, onFailure }: FormProps) {
  const [form, setForm] = useState({
    ...profile,
    rules: profile.presentation_rules.join("\n"),
    currency: profile.currency ?? "",
  });
  const [saved, setSaved] = useState(false);
  const id = useId();
  const set = (field: string) => (e: { target: { value: string } }) => setForm({ ...form, [field]: e.target.value });

  async function submit(event: FormEvent) {
    event.preventDefault();
    const body = {
      persona_name: form.persona_name,
      tone: form.tone,
      language: form.language || null,
      timezone: form.timezone,
      presentation_rules: form.rules.split("\n").map((r) => r.trim()).filter(Boolean),
      privacy_mode: form.privacy_mode,
      currency: form.currency.trim() || null,
      etag: profile.etag, // another device's save since this page loaded answers 412
    };
    try {
      await ok(api.PATCH("/v1/settings/assistant", { body }));
      setSaved(true);
      await onSaved();
    } catch (error) {
      setSaved(false);
      onFailure(error as ApiFailure);
    }
  }

  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Assistant</h2>
      <form onSubmit={submit} className="stacked">
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} value={form.persona_name} onChange={set("persona_name")} required maxLength={40} />
        <label htmlFor={`${id}-tone`}>Tone</label>
        <input id={`${id}-tone`} value={form.tone} onChange={set("tone")} maxLength={200} />
        <label htmlFor={`${id}-lang`}>Language (two letters; empty: the one you write in)</label>
        <input id={`${id}-lang`} value={form.language ?? ""} onChange={set("language")} pattern="[a-z]{2}" />
        <label htmlFor={`${id}-tz`}>Time zone</label>
        <input id={`${id}-tz`} value={form.timezone} onChange={set("timezone")} required />
        <label htmlFor={`${id}-currency`}>Currency (ISO code, e.g. CHF)</label>
        <input id={`${id}-currency`} value={form.currency} onChange={set("currency")} maxLength={3} />
        <label htmlFor={`${id}-rules`}>Presentation rules (one a line)</label>
        <textarea id={`${id}-rules`} value={form.rules} onChange={set("rules")} rows={3} />
        <label className="check">
          <input type="checkbox" checked={form.privacy_mode} onChange={(e) => setForm({ ...form, privacy_mode: e.target.checked })} />{" "}
          Privacy mode (keep sensitive facts out of replies)
        </label>
        <button type="submit">Save assistant</button>
        {saved && <p role="status">Saved.</p>}
        <Failure failure={failure} />
      </form>
    </section>
  );
}

/** Trust level, effective mode, what the next level needs, and a mode to pin. */
export function HitlSettings({ api }: { api: Api }) {
  const load = useCallback(async () => await ok(api.GET("/v1/settings/hitl")), [api]);
  const { data, failure, reload, setFailure } = useLoad(load);
  const id = useId();

  async function pin(value: string) {
    const pinned_mode = value ? (value as Mode) : null;
    try {
      await ok(api.PATCH("/v1/settings/hitl", { body: { pinned_mode, etag: data?.etag } }));
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    await reload();
  }

  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Approvals</h2>
      <Failure failure={failure} />
      {data && (
        <>
          <p>
            Trust level <strong>{data.level}</strong>: {MODES[data.mode]}. {data.tasks_completed} tasks done, {data.tasks_failed} failed.
          </p>
          {data.next_level && (
            <ul className="hint" aria-label={`What ${data.next_level.level} needs`}>
              {data.next_level.requirements.map((r) => (
                <li key={r.name}>
                  {r.met ? "✓" : "·"} {requirement(r.name, r.current ?? null, r.required)}
                </li>
              ))}
            </ul>
          )}
          <label htmlFor={`${id}-mode`}>Mode</label>
          <select id={`${id}-mode`} value={data.pinned_mode ?? ""} onChange={(e) => void pin(e.target.value)}>
            <option value="">Follow my trust level</option>
            {Object.entries(MODES).map(([mode, label]) => (
              <option key={mode} value={mode}>
                {label}
              </option>
            ))}
          </select>
        </>
      )}
    </section>
  );
}
