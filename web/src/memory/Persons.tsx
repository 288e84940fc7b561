import { type FormEvent, useEffect, useId, useState } from "react";
import { type Api, ApiFailure, type Fact, type Person, type Schemas, ok } from "../api/client";
import { factsAbout } from "./Facts";
import { Failure } from "./useLoad";

/** The person as read: a write names its etag, so another device's change since is a 412. */
function asRead(person: Person) {
  return { path: { person: person.id }, header: { "If-Match": `"${person.etag}"` } };
}

type Role = Schemas["PersonRole"];
const ROLES: Role[] = [
  "partner", "child", "parent", "sibling", "grandparent", "grandchild", "aunt_uncle",
  "cousin", "niece_nephew", "in_law", "friend", "colleague", "pet", "service_provider", "other",
];

const ACTIONS = { rename: "Rename", merge: "Merge…", split: "Split…", delete: "Delete" } as const;

export const describe = (p: Person) => `${p.display_name} (${p.role_to_user})`;

interface Props {
  api: Api;
  persons: Person[];
  onChange: () => void;
}

/** The people the assistant knows: rename, merge two into one, split one into two, delete. */
export function Persons({ api, persons, onChange }: Props) {
  const [failure, setFailure] = useState<ApiFailure | null>(null);

  async function change(call: () => Promise<unknown>) {
    try {
      await call();
      setFailure(null);
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    onChange();
  }

  return (
    <section aria-labelledby="persons-title">
      <h2 id="persons-title">People</h2>
      <Failure failure={failure} />
      {persons.length === 0 && <p className="empty">No people yet.</p>}
      <ul className="cards">
        {persons.map((person) => (
          <li key={person.id} className="card" data-person={person.id}>
            <PersonCard api={api} person={person} others={persons.filter((p) => p.id !== person.id)} change={change} />
          </li>
        ))}
      </ul>
    </section>
  );
}

interface CardProps {
  api: Api;
  person: Person;
  others: Person[];
  change: (call: () => Promise<unknown>) => Promise<void>;
}

function PersonCard({ api, person, others, change }: CardProps) {
  const [mode, setMode] = useState<"view" | "rename" | "merge" | "split" | "delete">("view");
  const name = describe(person);
  const done = (call: () => Promise<unknown>) => change(call).then(() => setMode("view"));
  return (
    <article aria-label={name}>
      <h3>{name}</h3>
      {person.aliases.length > 0 && <p className="hint">also: {person.aliases.join(", ")}</p>}
      <div className="actions">
        {(Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]).map((m) => (
          <button key={m} type="button" aria-expanded={mode === m} onClick={() => setMode(mode === m ? "view" : m)}>
            {ACTIONS[m]}
          </button>
        ))}
      </div>
      {mode === "rename" && (
        <Rename person={person} onSave={(display_name) => done(() => ok(api.PATCH("/v1/persons/{person}", { params: asRead(person), body: { display_name } })))} />
      )}
      {mode === "merge" && (
        <Merge
          person={person}
          others={others}
          onMerge={(keep) => done(() => ok(api.POST("/v1/persons/{person}:merge", { params: { path: { person: keep } }, body: { absorb_id: person.id } })))}
        />
      )}
      {mode === "split" && (
        <Split api={api} person={person} onSplit={(body) => done(() => ok(api.POST("/v1/persons/{person}:split", { params: { path: { person: person.id } }, body })))} />
      )}
      {mode === "delete" && (
        <p>
          Delete {name} and every fact about them?{" "}
          <button type="button" className="danger" onClick={() => done(() => ok(api.DELETE("/v1/persons/{person}", { params: asRead(person) })))}>
            Delete {person.display_name}
          </button>
        </p>
      )}
    </article>
  );
}

function Rename({ person, onSave }: { person: Person; onSave: (name: string) => void }) {
  const [value, setValue] = useState(person.display_name);
  const id = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (value.trim()) onSave(value.trim());
  };
  return (
    <form onSubmit={submit} className="inline">
      <label htmlFor={id}>New name</label>
      <input id={id} value={value} maxLength={120} onChange={(e) => setValue(e.target.value)} required />
      <button type="submit">Save name</button>
    </form>
  );
}

function Merge({ person, others, onMerge }: { person: Person; others: Person[]; onMerge: (keep: string) => void }) {
  const [keep, setKeep] = useState(others[0]?.id ?? "");
  const id = useId();
  if (others.length === 0) return <p className="hint">No one else to merge with.</p>;
  return (
    <form
      className="inline"
      onSubmit={(e) => {
        e.preventDefault();
        onMerge(keep);
      }}
    >
      <label htmlFor={id}>{person.display_name} is the same person as</label>
      <select id={id} value={keep} onChange={(e) => setKeep(e.target.value)}>
        {others.map((p) => (
          <option key={p.id} value={p.id}>
            {describe(p)}
          </option>
        ))}
      </select>
      <button type="submit">Merge</button>
    </form>
  );
}

function Split({ api, person, onSplit }: { api: Api; person: Person; onSplit: (body: Schemas["SplitRequest"]) => void }) {
  const [facts, setFacts] = useState<Fact[] | null>(null);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("other");
  const nameId = useId();
  const roleId = useId();
  useEffect(() => {
    factsAbout(api, person.id, false)
      .then(setFacts)
      .catch(() => setFacts([]));
  }, [api, person.id]);
  if (facts === null) return <p aria-busy="true">Loading facts…</p>;
  const toggle = (id: string) => setChosen((s) => new Set(s.has(id) ? [...s].filter((x) => x !== id) : [...s, id]));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim() && chosen.size) {
      onSplit({ new_person: { display_name: name.trim(), role_to_user: role }, fact_ids: [...chosen] });
    }
  };
  return (
    <form onSubmit={submit} className="split">
      <fieldset>
        <legend>Facts that are about someone else</legend>
        {facts.map((f) => (
          <label key={f.id} className="check">
            <input type="checkbox" checked={chosen.has(f.id)} onChange={() => toggle(f.id)} /> {f.text}
          </label>
        ))}
      </fieldset>
      <label htmlFor={nameId}>Their name</label>
      <input id={nameId} value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} />
      <label htmlFor={roleId}>Who they are to you</label>
      <select id={roleId} value={role} onChange={(e) => setRole(e.target.value as Role)}>
        {ROLES.map((r) => (
          <option key={r}>{r}</option>
        ))}
      </select>
      <button type="submit" disabled={!chosen.size}>
        Split
      </button>
    </form>
  );
}
