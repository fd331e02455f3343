/**
 * The `fetch` chat-cli gives ChatClient: the same requests over node:http(s), because loading Node's own
 * fetch (undici) on first use costs more than the whole command. It answers as fetch does for what
 * ChatClient reads (status, headers, whole body text), follows redirects as fetch does, turns socket
 * failures into fetch's `TypeError("fetch failed", { cause })`, and aborts on `init.signal`.
 */
import type { IncomingHttpHeaders, IncomingMessage, RequestOptions } from "node:http";
import type { FetchLike } from "../client/index.js";

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** fetch gives up after 20 redirects. */
const MAX_REDIRECTS = 20;
/** Request headers fetch drops when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/** The part of a fetch Response that ChatClient uses, with a real `Headers` built only if it is read. */
export interface HttpAnswer {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: Headers;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

interface Sent {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * A FetchLike on node:http(s). Requests it cannot express as fetch would send them (a body that is not a
 * string, headers that are not a plain record, a non-http URL) go to the global fetch unchanged.
 */
export const nodeHttpFetch: FetchLike = async (url, init) => {
  return (await send(url, init)) as unknown as Response;
};

async function send(url: string, init: RequestInit): Promise<HttpAnswer | Response> {
  const body = init.body ?? undefined;
  const headers = init.headers ?? {};
  // Not `instanceof Headers`: reading that global loads undici.
  const prototype = typeof headers === "object" ? Object.getPrototypeOf(headers) : undefined;
  const plainHeaders = prototype === Object.prototype || prototype === null;
  if (!/^https?:/i.test(url) || (body !== undefined && typeof body !== "string") || !plainHeaders) {
    return globalThis.fetch(url, init);
  }
  const sent: Sent = {
    method: (init.method ?? "GET").toUpperCase(),
    headers: lowerCased(headers as Record<string, string>),
    body,
  };
  const signal = init.signal ?? undefined;
  let target = new URL(url);
  for (let redirects = 0; ; redirects++) {
    signal?.throwIfAborted();
    const { response, bytes } = await exchange(target, sent, signal);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (!REDIRECT_STATUSES.has(status) || location === undefined || init.redirect === "manual") {
      return answer(target, response, bytes, redirects > 0);
    }
    if (init.redirect === "error" || redirects >= MAX_REDIRECTS) {
      throw new TypeError("fetch failed", { cause: new Error("redirect count exceeded") });
    }
    const next = new URL(location, target);
    if (next.origin !== target.origin) for (const name of CREDENTIAL_HEADERS) delete sent.headers[name];
    // As fetch: 303, and 301/302 after a POST, continue as a GET without the body.
    if (
      status === 303 ? sent.method !== "HEAD" : (status === 301 || status === 302) && sent.method === "POST"
    ) {
      sent.method = "GET";
      sent.body = undefined;
      for (const name of ["content-type", "content-length", "content-encoding", "content-language"]) {
        delete sent.headers[name];
      }
    }
    target = next;
  }
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = String(value);
  }
  return out;
}

/** One request and its whole answer body; any failure before the last byte rejects as fetch would. */
async function exchange(
  target: URL,
  sent: Sent,
  signal: AbortSignal | undefined,
): Promise<{ response: IncomingMessage; bytes: Buffer }> {
  const { request } = target.protocol === "https:" ? await import("node:https") : await import("node:http");
  const headers: Record<string, string> = { ...sent.headers };
  if (sent.body !== undefined) headers["content-length"] = String(Buffer.byteLength(sent.body));
  const options: RequestOptions = { method: sent.method, headers };
  return new Promise((resolve, reject) => {
    const req = request(target, options);
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      req.destroy();
      reject(error);
    };
    const onAbort = () =>
      fail(signal?.reason ?? new DOMException("This operation was aborted", "AbortError"));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (error) => fail(new TypeError("fetch failed", { cause: error })));
    req.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", (error) => fail(new TypeError("terminated", { cause: error })));
      response.on("close", () => {
        if (!response.complete) fail(new TypeError("terminated", { cause: new Error("other side closed") }));
      });
      response.on("end", () => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        decoded(response.headers, Buffer.concat(chunks)).then(
          (bytes) => resolve({ response, bytes }),
          (error: unknown) => reject(new TypeError("terminated", { cause: error })),
        );
      });
    });
    req.end(sent.body);
  });
}

/** fetch decodes gzip, deflate and br bodies; so does this, should a server compress unasked. */
async function decoded(headers: IncomingHttpHeaders, bytes: Buffer): Promise<Buffer> {
  const encoding = headers["content-encoding"]?.trim().toLowerCase();
  if (!encoding || encoding === "identity" || bytes.length === 0) return bytes;
  const zlib = await import("node:zlib");
  if (encoding === "gzip" || encoding === "x-gzip") return zlib.gunzipSync(bytes);
  if (encoding === "deflate") return zlib.inflateSync(bytes);
  if (encoding === "br") return zlib.brotliDecompressSync(bytes);
  return bytes;
}

function answer(target: URL, response: IncomingMessage, bytes: Buffer, redirected: boolean): HttpAnswer {
  const status = response.statusCode ?? 0;
  const raw = response.rawHeaders;
  let headers: Headers | undefined;
  // As fetch's text(): UTF-8, a leading byte order mark dropped.
  const text = new TextDecoder().decode(bytes);
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: response.statusMessage ?? "",
    url: target.href,
    redirected,
    // Headers is part of undici too: built on first read only (error answers), never on the success path.
    get headers() {
      if (!headers) {
        headers = new globalThis.Headers();
        for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
      }
      return headers;
    },
    text: async () => text,
    json: async () => JSON.parse(text),
  };
}
