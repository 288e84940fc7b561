import { useId, useState } from "react";
import { type Api, ApiFailure, ok } from "../api/client";
import { Failure } from "./useLoad";

/** Export everything as a JSON download; delete the account behind a typed confirmation. */
export function Account({ api, user, onDeleted }: { api: Api; user: string; onDeleted: () => void }) {
  const [typed, setTyped] = useState("");
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const phrase = `delete ${user}`;

  async function download() {
    try {
      const data = await ok(api.GET("/v1/account:export"));
      const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }));
      const link = document.createElement("a");
      link.href = url;
      link.download = `assistant-export-${user}.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (error) {
      setFailure(error as ApiFailure);
    }
  }

  async function erase() {
    setBusy(true);
    try {
      await ok(api.DELETE("/v1/account", { params: { query: { confirm: true } } }));
      onDeleted();
    } catch (error) {
      setFailure(error as ApiFailure); // a 503 leaves part done: sending again completes it
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Your data</h2>
      <button type="button" onClick={() => void download()}>
        Export everything (JSON)
      </button>
      <form
        className="stacked danger-zone"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed === phrase) void erase();
        }}
      >
        <label htmlFor={`${id}-confirm`}>
          To delete your account and everything the assistant holds about you, type <strong>{phrase}</strong>
        </label>
        <input id={`${id}-confirm`} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
        <button type="submit" className="danger" disabled={typed !== phrase || busy}>
          Delete my account
        </button>
      </form>
      <Failure failure={failure} />
    </section>
  );
}
