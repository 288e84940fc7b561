import { type FormEvent, useCallback, useId, useState } from "react";
import { type Api, ApiFailure, type Fact, type Person, ok } from "../api/client";
import { Failure, useLoad } from "./useLoad";

const DAY = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

/** Every fact about a subject ("self" or a person's id), through all the list's pages. */
export async function factsAbout(api: Api, subject: string, showHistory: boolean): Promise<Fact[]> {
  const facts: Fact[] = [];
  let token = "";
  do {
    const query = { filter: `subject_id = "${subject}"`, show_history: showHistory, page_size: 1000, page_token: token };
    const page = await ok(api.GET("/v1/facts", { params: { query } }));
    facts.push(...page.facts);
    token = page.next_page_token;
  } while (token);
  return facts;
}

/** The fact as read: a write names its etag, so another device's edit since is a 412. */
function ifMatch(fact: Fact) {
  return { path: { fact: fact.id }, header: { "If-Match": `"${fact.etag}"` } };
}

/** One subject's facts (the user's, or a person's), current ones editable, with history. */
export function Facts({ api, persons, version }: { api: Api; persons: Person[]; version: number }) {
  const [subject, setSubject] = useState("self");
  const selectId = useId();
  const load = useCallback(async () => {
    void version; // reload when persons change (a merge moves facts)
    return factsAbout(api, subject, true);
  }, [api, subject, version]);
  const { data: facts, failure, reload, setFailure } = useLoad(load);
  const current = facts?.filter((f) => f.current) ?? [];
  const history = facts?.filter((f) => !f.current) ?? [];

  async function change(call: () => Promise<unknown>) {
    try {
      await call();
    } catch (error) {
      setFailure(error as ApiFailure);
    }
    await reload();
  }

  return (
    <section aria-labelledby="facts-title">
      <h2 id="facts-title">Facts</h2>
      <label htmlFor={selectId}>Facts about</label>
      <select id={selectId} value={subject} onChange={(e) => setSubject(e.target.value)}>
        <option value="self">Me</option>
        {persons.map((p) => (
          <option key={p.id} value={p.id}>
            {p.display_name} ({p.role_to_user})
          </option>
        ))}
      </select>
      <Failure failure={failure} />
      <ul className="facts" aria-label="Current facts">
        {current.map((fact) => (
          <FactRow
            key={fact.id}
            fact={fact}
            onEdit={(text) => change(() => ok(api.PATCH("/v1/facts/{fact}", { params: ifMatch(fact), body: { text } })))}
            onDelete={() => change(() => ok(api.DELETE("/v1/facts/{fact}", { params: ifMatch(fact) })))}
          />
        ))}
        {facts && current.length === 0 && <li className="empty">No facts.</li>}
      </ul>
      {history.length > 0 && (
        <details>
          <summary>History ({history.length})</summary>
          <ul className="facts history" aria-label="Earlier versions">
            {history.map((fact) => (
              <li key={fact.id}>
                <s>{fact.text}</s> until {fact.valid_to ? DAY.format(new Date(fact.valid_to)) : "?"}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

function FactRow({ fact, onEdit, onDelete }: { fact: Fact; onEdit: (text: string) => void; onDelete: () => void }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(fact.text);
  const inputId = useId();

  function save(event: FormEvent) {
    event.preventDefault();
    setEditing(false);
    if (text.trim() && text.trim() !== fact.text) onEdit(text.trim());
  }

  if (editing) {
    return (
      <li>
        <form onSubmit={save} className="inline">
          <label htmlFor={inputId} className="visually-hidden">
            Fact text
          </label>
          <input id={inputId} value={text} maxLength={200} onChange={(e) => setText(e.target.value)} autoFocus />
          <button type="submit">Save</button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      </li>
    );
  }
  return (
    <li>
      <span className="fact-text">{fact.text}</span> <span className="tag">{fact.type}</span>
      <button type="button" aria-label={`Edit “${fact.text}”`} onClick={() => setEditing(true)}>
        Edit
      </button>
      <button type="button" aria-label={`Delete “${fact.text}”`} onClick={onDelete}>
        Delete
      </button>
    </li>
  );
}
