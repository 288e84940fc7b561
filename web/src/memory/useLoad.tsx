import { useCallback, useEffect, useState } from "react";
import { ApiFailure } from "../api/client";
import { failureText } from "../words";

/** Loads once and on `reload()`; a failure is kept to show in words. */
export function useLoad<T>(load: () => Promise<T>) {
  const [data, setData] = useState<T | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const reload = useCallback(async () => {
    try {
      setData(await load());
      setFailure(null);
    } catch (error) {
      setFailure(error instanceof ApiFailure ? error : new ApiFailure(0, "client_error", String(error)));
    }
  }, [load]);
  useEffect(() => {
    let current = true; // a reply that arrives after the next load started is dropped
    load().then(
      (loaded) => {
        if (current) setData(loaded);
      },
      (error: unknown) => {
        if (current) setFailure(error instanceof ApiFailure ? error : new ApiFailure(0, "client_error", String(error)));
      },
    );
    return () => {
      current = false;
    };
  }, [load]);
  return { data, failure, reload, setFailure };
}

/** Runs a change, says what it did (a polite status line), shows a failure in words, and
 * loads again either way: the list shows what the server now holds. */
export function useAct(reload: () => Promise<void>, setFailure: (failure: ApiFailure) => void) {
  const [status, setStatus] = useState("");
  const act = useCallback(
    async (action: () => Promise<unknown>, said: string) => {
      try {
        await action();
        setStatus(said);
      } catch (error) {
        setFailure(error instanceof ApiFailure ? error : new ApiFailure(0, "client_error", String(error)));
      }
      await reload();
    },
    [reload, setFailure],
  );
  return { status, setStatus, act };
}

export function Failure({ failure }: { failure: ApiFailure | null }) {
  if (!failure) return null;
  return (
    <p role="alert" className="error">
      {failureText(failure)}
    </p>
  );
}
