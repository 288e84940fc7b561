// The typed client of docs/openapi.yaml: every call's path, body and answer come from the
// generated `schema.d.ts`, so a contract change that breaks the client fails `tsc`.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type TurnResponse = Schemas["TurnResponse"];
export type Interrupt = Schemas["Interrupt"];
export type ChatMessage = Schemas["ChatMessage"];
export type Chat = Schemas["Chat"];
export type Job = Schemas["Job"];
export type Person = Schemas["Person"];
export type Fact = Schemas["Fact"];
export type PendingItem = Schemas["PendingItem"];

/** Gives the current ID token (dev-minted locally, Firebase's in production). */
export type TokenSource = () => Promise<string>;

/** A refusal or failure with the product's machine-readable code (see docs/api.md, Errors). */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "ApiFailure";
    this.status = status;
    this.code = code;
  }
}

/** The product's `{"error": {code, message}}` body, or a generic failure for anything else. */
export function failureFrom(status: number, body: unknown): ApiFailure {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error.code === "string") {
    return new ApiFailure(status, error.code, String(error.message ?? ""));
  }
  return new ApiFailure(status, "http_error", `the server answered ${status}`);
}

export function apiClient(token: TokenSource, baseUrl = "", fetchImpl?: typeof fetch) {
  const client = createClient<paths>({ baseUrl, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  client.use({
    async onRequest({ request }) {
      // The same header whichever way the user signed in.
      request.headers.set("Authorization", `Bearer ${await token()}`);
      return request;
    },
  });
  return client;
}

export type Api = ReturnType<typeof apiClient>;

/** The data of a JSON call, or an `ApiFailure` thrown with the product's code. */
export async function ok<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new ApiFailure(0, "network_error", "the server could not be reached");
  }
  if (!result.response.ok || result.data === undefined) {
    throw failureFrom(result.response.status, result.error);
  }
  return result.data;
}
