// Calls to resources the typed client does not know yet (the reminders, notifications and
// push contract of docs/briefs, built in parallel): JSON in and out, the same bearer token
// and the same `ApiFailure` on a refusal. Once docs/openapi.yaml has them, their callers move
// to `apiClient` and this file goes.
import { ApiFailure, type TokenSource, failureFrom } from "./client";

export type RawCall = <T>(method: string, path: string, body?: unknown) => Promise<T>;

export function rawClient(token: TokenSource, fetchImpl: typeof fetch = fetch): RawCall {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { Authorization: `Bearer ${await token()}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      response = await fetchImpl(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ApiFailure(0, "network_error", "the server could not be reached");
    }
    const text = await response.text();
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (!response.ok) throw failureFrom(response.status, parsed);
    return parsed as T;
  };
}
