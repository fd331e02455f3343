/** Fetch-side helpers every route of the reference server shares: route type, JSON errors, HTML pages (escaped, one strict layout), redirects, cookies, bodies. */

import { BodyTooLargeError, readBoundedBytes } from "../internal/bounded-body.js";
import { ERROR_STATUS } from "../wire/index.js";
import type { CookieSource } from "./context.js";
import { newId } from "./ids.js";
import { ServiceError } from "./service-error.js";

/** Bodies above 1 MiB are refused with 413 `payload_too_large`. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A JSON answer before it becomes a `Response` (the form idempotency keys keep). */
export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The incoming `x-request-id` when it is sane, else a fresh `req_...` id. */
export function requestIdFrom(incoming: string | null | undefined): string {
  return incoming && SANE_REQUEST_ID.test(incoming) ? incoming : newId("req");
}

/** The service's error body for any failure; unknown errors become 500 `internal` without details. */
export function errorResponse(error: unknown, requestId: string): JsonAnswer {
  const failure =
    error instanceof ServiceError
      ? error
      : new ServiceError("internal", "The server failed to handle the request.");
  const headers: Record<string, string> = {};
  const retryAfter = failure.extra.retryAfter;
  if (typeof retryAfter === "number") headers["retry-after"] = String(retryAfter);
  return {
    status: ERROR_STATUS[failure.code],
    headers,
    body: { error: { ...failure.extra, code: failure.code, message: failure.message, requestId } },
  };
}

/** What the edge knows about a request besides the `Request` itself. */
export interface RequestInfo {
  /** Echoed as `x-request-id` on the response and put in every error body. */
  requestId: string;
  /** The peer address of the connection (no proxy header is trusted). */
  clientIp: string;
  /** The request URL, parsed once. */
  url: URL;
  /**
   * The path as the client sent it (still percent-encoded, `.` and `..` segments not folded as `url.pathname`
   * folds them), when the edge knows it; routes that must not let `/v2/chats/%2e%2e` reach another route read it.
   */
  rawPath?: string;
}

/** One part of the server: answers the requests it owns, `undefined` for the rest (the next part is asked). */
export type RouteHandler = (request: Request, info: RequestInfo) => Promise<Response | undefined>;

/** The `RequestInfo` of a request: a sane incoming `x-request-id` or a fresh one; `rawTarget` as sent on the wire. */
export function requestInfoOf(request: Request, clientIp: string, rawTarget?: string): RequestInfo {
  const info: RequestInfo = {
    requestId: requestIdFrom(request.headers.get("x-request-id")),
    clientIp,
    url: new URL(request.url),
  };
  if (rawTarget !== undefined) info.rawPath = rawTarget.split("?")[0]!.split("#")[0]!;
  return info;
}

/** A JSON response; private by default (`cache-control: no-store`). */
export function jsonResponse(status: number, body: unknown, headers?: HeadersInit): Response {
  const merged = new Headers(headers);
  merged.set("content-type", "application/json; charset=utf-8");
  if (!merged.has("cache-control")) merged.set("cache-control", "no-store");
  return new Response(body === undefined ? null : JSON.stringify(body), { status, headers: merged });
}

/**
 * The service's error body (`{ error: { code, message, requestId, ... } }`) with its status; anything but a
 * `ServiceError` becomes 500 `internal` without details.
 */
export function errorJsonResponse(error: unknown, requestId: string): Response {
  const answer = errorResponse(error, requestId);
  return jsonResponse(answer.status, answer.body, answer.headers);
}

/** Shorthand for `errorJsonResponse(new ServiceError(code, message, extra), requestId)`. */
export function serviceErrorResponse(
  code: ServiceError["code"],
  message: string,
  requestId: string,
  extra: Record<string, unknown> = {},
): Response {
  return errorJsonResponse(new ServiceError(code, message, extra), requestId);
}

/** A complete HTML page in the one layout, with the strict page headers (no scripts, framing, referrer, caching). */
export function pageResponse(status: number, title: string, body: Html, headers?: HeadersInit): Response {
  const merged = new Headers(PAGE_HEADERS);
  // forEach gives each `set-cookie` apart.
  new Headers(headers).forEach((value, name) => {
    merged.append(name, value);
  });
  return new Response(renderPage(title, body), { status, headers: merged });
}

/** A redirect (302 by default, 303 after a form post) that no cache keeps. */
export function redirectResponse(
  location: string,
  status: 301 | 302 | 303 | 307 | 308 = 302,
  headers?: HeadersInit,
): Response {
  const merged = new Headers(headers);
  merged.set("location", location);
  merged.set("cache-control", "no-store");
  return new Response(null, { status, headers: merged });
}

/** The value of one cookie of the request, percent-decoded; undefined when absent or undecodable. */
export function readCookie(req: CookieSource, name: string): string | undefined {
  const header = req.headers instanceof Headers ? req.headers.get("cookie") : req.headers.cookie;
  for (const pair of header?.split(";") ?? []) {
    const eq = pair.indexOf("=");
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface CookieOptions {
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: "strict" | "lax" | "none";
  /** Defaults to `/`. */
  path?: string;
  /** Lifetime in milliseconds (written as `Max-Age` in seconds); 0 expires the cookie now. */
  maxAgeMs?: number;
}

const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** One `Set-Cookie` value; the value is percent-encoded so it can hold any text. */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (!COOKIE_NAME.test(name)) throw new TypeError(`Invalid cookie name ${JSON.stringify(name)}`);
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${options.path ?? "/"}`];
  if (options.maxAgeMs !== undefined) {
    const seconds = Math.max(0, Math.floor(options.maxAgeMs / 1000));
    parts.push(`Max-Age=${seconds}`, `Expires=${new Date(Date.now() + seconds * 1000).toUTCString()}`);
  }
  if (options.httpOnly) parts.push("HttpOnly");
  if (options.secure) parts.push("Secure");
  if (options.sameSite)
    parts.push(`SameSite=${options.sameSite[0]!.toUpperCase()}${options.sameSite.slice(1)}`);
  return parts.join("; ");
}

/** The `Set-Cookie` value that removes a cookie set with the same path. */
export function clearCookie(name: string, options: Omit<CookieOptions, "maxAgeMs"> = {}): string {
  return serializeCookie(name, "", { ...options, maxAgeMs: 0 });
}

/**
 * The body as UTF-8 text (invalid sequences replaced; undefined when empty), read as a stream and refused with
 * `ServiceError("payload_too_large")` as soon as it passes `maxBytes` (a declared `content-length` above the cap is
 * refused before reading). A `gzip` or `deflate` `Content-Encoding` is inflated on the way, the cap counting
 * inflated bytes (a small bomb is refused too); another encoding, or data that does not inflate, is `bad_request`.
 */
export async function readBodyText(
  request: Request,
  maxBytes: number = MAX_BODY_BYTES,
): Promise<string | undefined> {
  const encoding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  const body =
    request.body && encoding !== "identity" ? await inflated(request.body, encoding) : request.body;
  const bytes = await readBoundedBytes(
    { headers: request.headers, body },
    { maxBytes, what: "the request body" },
  ).catch((error: unknown) => {
    if (error instanceof BodyTooLargeError)
      throw new ServiceError("payload_too_large", `The request body is larger than ${error.maxBytes} bytes.`);
    throw new ServiceError("bad_request", "The request body could not be read (bad compressed data?).");
  });
  return bytes.byteLength === 0 ? undefined : new TextDecoder().decode(bytes);
}

/** The body inflated as it is read, for `gzip` and `deflate`; another encoding is refused. */
async function inflated(
  body: ReadableStream<Uint8Array>,
  encoding: string,
): Promise<ReadableStream<Uint8Array>> {
  if (encoding === "gzip" || encoding === "x-gzip" || encoding === "deflate") {
    const format = encoding === "deflate" ? "deflate" : "gzip";
    return body.pipeThrough(
      new DecompressionStream(format) as unknown as ReadableWritablePair<Uint8Array, Uint8Array>,
    );
  }
  await body.cancel().catch(() => {});
  throw new ServiceError(
    "bad_request",
    `Content-Encoding ${JSON.stringify(encoding.slice(0, 40))} is not supported.`,
  );
}

/** Form posts are small: 64 KiB is plenty for every form of the server. */
const MAX_FORM_BYTES = 64 * 1024;

/**
 * An `application/x-www-form-urlencoded` body as `URLSearchParams`; `ServiceError("bad_request")` for another
 * content type, `payload_too_large` past `maxBytes`.
 */
export async function readFormBody(
  request: Request,
  maxBytes: number = MAX_FORM_BYTES,
): Promise<URLSearchParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded")
    throw new ServiceError("bad_request", "The form must be sent as application/x-www-form-urlencoded.");
  return new URLSearchParams((await readBodyText(request, maxBytes)) ?? "");
}

function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Tagged template that escapes every interpolated value unless it is already `Html`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, index) => {
    out += renderValue(value) + (strings[index + 1] ?? "");
  });
  return new Html(out);
}

function renderValue(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(renderValue).join("");
  if (value === undefined || value === null || value === false) return "";
  return escapeHtml(value);
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}
.msg{border:1px solid #ddd;border-radius:6px;padding:.6rem .8rem;margin:.6rem 0}.user{background:#f6f8fa}
.meta{color:#666;font-size:.85em}.waits{border-left:4px solid #d9822b;padding:.4rem .8rem;background:#fff8f0}
pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}label{display:block;margin:.4rem 0}
.error{color:#b00020}button{padding:.4rem 1rem}`;

/** Headers of every page: no scripts, no framing, no referrer (links may carry one-time tickets), no caching. */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** The complete document of a page in the one plain layout. */
function renderPage(title: string, body: Html): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Chat reference server</title>` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head>` +
    `<body>${body.text}</body></html>`
  );
}
