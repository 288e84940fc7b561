import { useCallback, useState } from "react";
import { type Api, ApiFailure, type PendingItem, type Schemas, ok } from "../api/client";
import { Failure, useLoad } from "./useLoad";

// The two shapes `:resolve` takes (the call checks them against the schema).
type Resolve = { item: string } & (
  | { choice: "person"; person_id: string }
  | { choice: Exclude<Schemas["PendingChoice"], "person"> }
);

function personLabel(person: Schemas["Person"]): string {
  return `${person.display_name} (${person.role_to_user})`;
}

/** Facts held back until the user answers: which person, or which of two facts. */
export function Pending({ api, onChange }: { api: Api; onChange: () => void }) {
  const load = useCallback(
    async () => (await ok(api.GET("/v1/pendingItems", { params: { query: { page_size: 200 } } }))).pending_items,
    [api],
  );
  const { data: items, failure, reload, setFailure } = useLoad(load);
  const [notice, setNotice] = useState<string | null>(null);

  async function resolve({ item, ...answer }: Resolve) {
    try {
      await ok(api.POST("/v1/pendingItems/{item}:resolve", { params: { path: { item } }, body: answer }));
      setNotice(null);
      onChange();
    } catch (error) {
      if (error instanceof ApiFailure && error.code === "pending_not_open") setNotice("Already answered.");
      else setFailure(error as ApiFailure);
    }
    await reload();
  }

  return (
    <section aria-labelledby="pending-title">
      <h2 id="pending-title">Open questions</h2>
      <Failure failure={failure} />
      {notice && <p role="status">{notice}</p>}
      {items?.length === 0 && <p className="empty">Nothing waits for an answer.</p>}
      <ul className="cards">
        {items?.map((item) => (
          <li key={item.id} className="card">
            <PendingQuestion item={item} onResolve={resolve} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function PendingQuestion({ item, onResolve }: { item: PendingItem; onResolve: (r: Resolve) => void }) {
  const held = item.facts.map((f) => f.text).join("; ");
  if (item.kind === "disambiguation") {
    return (
      <div role="group" aria-label={`Which ${item.mention}?`}>
        <p>
          Which <strong>{item.mention}</strong>: “{held}”?
        </p>
        {item.candidates.map((person) => (
          <button key={person.id} type="button" onClick={() => onResolve({ item: item.id, choice: "person", person_id: person.id })}>
            {personLabel(person)}
          </button>
        ))}
        <button type="button" onClick={() => onResolve({ item: item.id, choice: "someone_else" })}>
          Someone else{item.proposed_person ? ` (new: ${personLabel(item.proposed_person)})` : ""}
        </button>
      </div>
    );
  }
  const labels = { keep_old: "Keep the old", take_new: "Take the new", keep_both: "Keep both" } as const;
  return (
    <div role="group" aria-label="Which fact is right?">
      <p>
        “{held}” contradicts “{item.conflicting_fact?.text}”.
      </p>
      {(["keep_old", "take_new", "keep_both"] as const).map((choice) => (
        <button key={choice} type="button" onClick={() => onResolve({ item: item.id, choice })}>
          {labels[choice]}
        </button>
      ))}
    </div>
  );
}
