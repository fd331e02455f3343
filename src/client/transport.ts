/** The client's request/response plumbing: its ky instance, body parsing, paths, queries, headers and failures. */
import ky, { HTTPError, type KyInstance, TimeoutError } from "ky";
import type * as z from "zod";
import { describeNetworkFailure } from "../internal/network-errors.js";
import { proxyAwareFetch } from "../internal/proxy.js";
import {
  apiErrorFor,
  ChatConnectionError,
  ChatError,
  ChatTimeoutError,
  issuePath,
  ResponseValidationError,
  readErrorBody,
} from "./errors.js";

/** The `fetch` the client calls (through ky, with a `Request`); pass your own (a test double, an app's) as `fetch`. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Header values to add; `null` removes a default header (e.g. `{ "user-agent": null }`), undefined is skipped. */
export type HeadersOption = Record<string, string | null | undefined>;

export { HTTPError, TimeoutError };

/** Answers with no body by definition; a Response built with one throws. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The ky instance of a client. Its fetch reads each answer's whole body within the attempt, so ky's per-attempt
 * timeout covers the body too. This is the one place the client's default fetch is chosen.
 */
export function createKy(fetch: FetchLike | undefined, proxy: string | false | undefined): KyInstance {
  // The platform fetch, through the proxy the option or the environment chooses (nothing loads without one).
  const send: FetchLike = fetch ?? proxyAwareFetch({ proxy });
  return ky.create({
    fetch: async (input, init) => {
      const answer = await send(input, init);
      const body = NULL_BODY_STATUSES.has(answer.status) ? null : await answer.arrayBuffer();
      return new Response(body, answer);
    },
    hooks: {
      beforeRetry: [
        ({ request, retryCount }) => {
          request.headers.set("x-retry-count", String(retryCount));
        },
      ],
    },
  });
}

/** Parses a 2xx body with its wire schema (none: JSON as is); a body that is not JSON or breaks the schema names what is wrong. */
export function parseBody<S extends z.ZodType>(
  schema: S | undefined,
  text: string,
  label: string,
): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ResponseValidationError(
      `${label} answered with a body that is not JSON${text ? "" : " (empty)"}. Is the base URL a chat service?`,
      [],
      text,
    );
  }
  if (!schema) return json as z.output<S>;
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const shown = issues
    .slice(0, 3)
    .map((issue) => `${issuePath(issue.path)}: ${issue.message}`)
    .join("; ");
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  throw new ResponseValidationError(
    `${label} answered with a body that breaks the wire format: ${shown}${more}. ` +
      "The service and this client disagree; update chat-mcp-bridge or report it.",
    issues,
    json,
  );
}

/** An id as one path segment: encoded, and never empty (an empty id would address another endpoint). */
export function pathId(name: string, value: string): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(value);
}

export function queryString(params: Record<string, string | number | undefined>): string {
  let out = "";
  for (const key in params) {
    const value = params[key];
    if (value === undefined || value === "") continue;
    out += `${out ? "&" : "?"}${key}=${encodeURIComponent(String(value))}`;
  }
  return out;
}

/** Lower-cased merge so `Authorization` and `authorization` are one header; null removes, undefined is skipped. */
export function mergeHeaders(
  base: Record<string, string>,
  extra: HeadersOption | undefined,
): Record<string, string> {
  if (!extra) return base;
  const merged = { ...base };
  for (const [name, value] of Object.entries(extra)) {
    const key = name.toLowerCase();
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/** What `failureOf` needs to know of the call that failed. */
export interface FailedCall {
  /** `METHOD /path`, without the query. */
  label: string;
  baseUrl: string;
  /** The per-attempt timeout the call had. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The typed error for a failed call: the service's answer, a timeout, the caller's abort, or no connection. */
export async function failureOf(
  error: unknown,
  { label, baseUrl, timeoutMs, signal }: FailedCall,
): Promise<unknown> {
  if (error instanceof HTTPError) {
    const { response } = error;
    return apiErrorFor(
      response.status,
      readErrorBody(await response.text()),
      response.headers,
      label,
      baseUrl,
    );
  }
  if (error instanceof TimeoutError) {
    const next = label.startsWith("POST")
      ? "The request was sent and may still complete: check the chat's messages before sending it again, " +
        "and pass a larger timeoutMs to wait longer."
      : "Raise timeoutMs, or check that the service is reachable.";
    return new ChatTimeoutError(
      `${label} timed out after ${timeoutMs} ms with no complete answer from ${baseUrl}. ${next}`,
      timeoutMs,
    );
  }
  if (signal?.aborted) return signal.reason;
  if (error instanceof ChatError || !(error instanceof Error)) return error;
  const network = describeNetworkFailure(error, baseUrl);
  if (network) return new ChatConnectionError(`${label} failed: ${network}`, { cause: error });
  const reason = (error as { cause?: { code?: string } }).cause?.code ?? error.message;
  return new ChatConnectionError(
    `${label} could not reach ${baseUrl}${reason ? ` (${reason})` : ""}. ` +
      "Check that the service runs there (`chat-cli serve` starts a local one) or set CHAT_API_URL.",
    { cause: error },
  );
}
