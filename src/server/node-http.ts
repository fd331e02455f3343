/** The thin `node:http` edge of the fetch-shaped server: IncomingMessage -> `Request`, `Response` -> ServerResponse, streaming with backpressure and client aborts. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { newId } from "./ids.js";

/** Answers a request, or `undefined` to hand it to the fallback listener. */
export type FetchHandler = (
  request: Request,
  clientIp: string,
  rawTarget: string,
) => Promise<Response | undefined>;

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A `node:http` request listener around `handle`. `origin` (the server's own origin) builds the request URL: the
 * `Host` header stays a header, checked by the routes that care, and never decides where a URL points.
 */
export function toNodeListener(
  handle: FetchHandler,
  origin: () => string,
  fallback?: NodeListener,
): NodeListener {
  return (req, res) => {
    const aborted = new AbortController();
    // The response closing before it finished means the client went away: abort the request's work.
    res.once("close", () => {
      if (!res.writableFinished) aborted.abort(new Error("The client closed the connection"));
    });
    let request: Request;
    try {
      request = toRequest(req, origin(), aborted.signal);
    } catch {
      sendPlainError(res, 400, "The request target is not valid.");
      return;
    }
    handle(request, req.socket.remoteAddress ?? "", req.url ?? "/")
      .then(async (response) => {
        if (response === undefined) {
          if (fallback) fallback(req, res);
          else sendPlainError(res, 404, "Not found.");
          return;
        }
        // A body left unread (refused as too large) leaves the connection unusable: tell the client not to reuse it.
        if (!req.complete) res.setHeader("connection", "close");
        await writeResponse(response, res);
      })
      .catch((error: unknown) => {
        console.error("reference server: request failed:", error);
        if (!res.headersSent) sendPlainError(res, 500, "The server failed to handle the request.");
        else res.destroy();
      });
  };
}

/** The web `Request` of an IncomingMessage; its body streams from the socket (never buffered here). */
export function toRequest(req: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const target = req.url ?? "/";
  if (!target.startsWith("/")) throw new TypeError("absolute-form or asterisk-form request target");
  const headers = new Headers();
  for (let index = 0; index + 1 < req.rawHeaders.length; index += 2) {
    headers.append(req.rawHeaders[index]!, req.rawHeaders[index + 1]!);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(`${origin}${target}`, {
    method,
    headers,
    signal,
    ...(hasBody ? { body: bodyStream(req), duplex: "half" } : {}),
  } as RequestInit);
}

/**
 * The request body as a web stream, paused while the reader is full. Not `Readable.toWeb`: on Node 20 its adapter
 * still enqueues socket data after the reader cancels (a body refused as too large), an uncaught
 * "Controller is already closed" that would end the process.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          if (settled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once("end", () => {
          if (settled) return;
          settled = true;
          controller.close();
        });
        req.once("error", (error) => {
          if (settled) return;
          settled = true;
          controller.error(error);
        });
        req.once("close", () => {
          if (settled) return;
          settled = true;
          controller.error(new Error("the client closed the connection before the body ended"));
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        // The rest of the body is read and dropped; the adapter closes the connection after the answer.
        settled = true;
        req.resume();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  );
}

/** Writes status, headers (each `set-cookie` apart) and the body, waiting for `drain` and stopping when the client goes. */
export async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: string[] = [];
  response.headers.forEach((value, name) => {
    headers.push(name, value);
  });
  res.writeHead(response.status, response.statusText || undefined, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // Event streams must reach the client at once, not when a buffer fills.
  res.flushHeaders();
  const reader = response.body.getReader();
  const gone = new Promise<"gone">((resolve) => res.once("close", () => resolve("gone")));
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), gone]);
      if (next === "gone") {
        await reader.cancel().catch(() => {});
        return;
      }
      if (next.done) break;
      if (!res.write(next.value)) {
        const drained = await Promise.race([
          new Promise<"drain">((resolve) => res.once("drain", () => resolve("drain"))),
          gone,
        ]);
        if (drained === "gone") {
          await reader.cancel().catch(() => {});
          return;
        }
      }
    }
    res.end();
  } catch (error) {
    await reader.cancel().catch(() => {});
    res.destroy(error as Error);
  }
}

function sendPlainError(res: ServerResponse, status: number, message: string): void {
  const requestId = newId("req");
  const code = status === 404 ? "not_found" : status === 400 ? "bad_request" : "internal";
  const body = JSON.stringify({ error: { code, message, requestId } });
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    "x-request-id": requestId,
  });
  res.end(body);
}

/**
 * Answers requests that Node's HTTP parser refuses before any route runs (bad request line, control characters
 * in headers, headers over 16 KB) with the JSON error body too, instead of Node's empty 400/431.
 */
export function answerUnparsableRequest(error: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const timedOut = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
  const headersTooLarge = error.code === "HPE_HEADER_OVERFLOW";
  const status = timedOut ? 408 : 400;
  const requestId = newId("req");
  const payload = JSON.stringify({
    error: {
      code: timedOut ? "request_timeout" : "bad_request",
      message: timedOut
        ? "The request was not received in time."
        : headersTooLarge
          ? "The request headers are too large (16 KB at most)."
          : "The request is not valid HTTP.",
      requestId,
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${timedOut ? "Request Timeout" : "Bad Request"}\r\n` +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(payload)}\r\n` +
      `x-request-id: ${requestId}\r\n` +
      "Connection: close\r\n\r\n" +
      payload,
  );
}
