/** Telling a wrong bridge URL from the MCP endpoint: whether a URL answers as one, and which nearby URL does. */
import { readBoundedText } from "../../../internal/bounded-body.js";
import { describeError } from "../../log/log.js";
import { BRIDGE_INFO } from "../../messages/request-model.js";
import type { HttpAnswer, HttpExchange } from "./http-exchange.js";
import { nodeHttpExchange } from "./node-http-exchange.js";

/** The most of a protected resource metadata document read (as in OAuth discovery). */
const MAX_METADATA_BYTES = 256 * 1024;

const CHECK_TIMEOUT_MS = 5000;

/** Why a sign-in cannot start at this URL (it is not the MCP endpoint): the host is told to change the URL. */
export class SignInUrlRefused extends Error {
  override readonly name = "SignInUrlRefused";
}

/** The 2025 `initialize` parameters, naming `clientInfo` as the one asking. */
export function initializeParams(clientInfo: { name: string; version: string } = BRIDGE_INFO) {
  return { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { ...clientInfo } };
}

/** How a URL answered an `initialize`: its status and headers (the body is not read). */
type InitializeAnswer = Pick<HttpAnswer, "status" | "ok" | "headers">;

/** POSTs a 2025 `initialize` with no token (never a sign-in) and ends the session it opens; throws past `timeoutMs`. */
export async function sendInitialize(
  url: URL,
  exchange: HttpExchange,
  options: {
    headers?: Record<string, string>;
    clientInfo?: { name: string; version: string };
    signal?: AbortSignal;
    timeoutMs?: number;
  } = {},
): Promise<InitializeAnswer> {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...options.headers,
  };
  const within = (ms: number) =>
    options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms);
  const response = await exchange(url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "chat-mcp-bridge/endpoint-check",
      method: "initialize",
      params: initializeParams(options.clientInfo),
    }),
    signal: within(options.timeoutMs ?? CHECK_TIMEOUT_MS),
  });
  await response.body?.cancel().catch(() => undefined);
  const session = response.headers.get("mcp-session-id");
  if (session) {
    const end = await exchange(url, {
      method: "DELETE",
      headers: { ...headers, "mcp-session-id": session },
      signal: within(CHECK_TIMEOUT_MS),
    }).catch(() => undefined);
    await end?.body?.cancel().catch(() => undefined);
  }
  return { status: response.status, ok: response.ok, headers: response.headers };
}

/** Whether `url` answers an unauthenticated `initialize` as an MCP endpoint (a Bearer challenge, JSON or SSE). */
export async function probeEndpoint(
  url: URL,
  exchange: HttpExchange = nodeHttpExchange,
): Promise<{ isMcp: boolean; status?: number; unreachable?: string }> {
  let response: InitializeAnswer;
  try {
    response = await sendInitialize(url, exchange);
  } catch (error) {
    return { isMcp: false, unreachable: describeError(error) };
  }
  const { status } = response;
  if (status === 401) return { isMcp: await challengeNames(url, response.headers, exchange), status };
  const isMcp =
    response.ok && /application\/json|text\/event-stream/i.test(response.headers.get("content-type") ?? "");
  return { isMcp, status };
}

/** `<base>/mcp` (the base being the URL without a trailing `/v2` or `/mcp`, or the origin) when it answers as MCP. */
export async function suggestedMcpUrl(
  url: URL,
  exchange: HttpExchange = nodeHttpExchange,
): Promise<string | undefined> {
  const base = url.pathname.replace(/\/+$/, "").replace(/\/(v2|mcp)$/, "");
  const candidates = new Set([`${url.origin}${base}/mcp`, `${url.origin}/mcp`]);
  candidates.delete(url.href);
  for (const candidate of candidates) {
    if ((await probeEndpoint(new URL(candidate), exchange)).isMcp) return candidate;
  }
  return undefined;
}

/** What to tell the user when `url` is not the MCP endpoint (`what` says how it answered, e.g. "HTTP 404"). */
export async function wrongEndpointMessage(
  url: URL,
  what: string,
  exchange: HttpExchange = nodeHttpExchange,
): Promise<string> {
  const suggestion = await suggestedMcpUrl(url, exchange);
  return suggestion
    ? `${url.href} is not the MCP endpoint (${what}); ${suggestion} is: use that URL instead.`
    : `${url.href} is not an MCP endpoint (${what}); pass the server's MCP endpoint URL (often ending in /mcp).`;
}

/**
 * A Bearer challenge is `url`'s own when its resource metadata (RFC 9728) names `url` (or the origin, for an /mcp
 * path): a protected API challenges every path too. A challenge without metadata is taken at its word.
 */
async function challengeNames(
  url: URL,
  headers: { get(name: string): string | null },
  exchange: HttpExchange,
): Promise<boolean> {
  const header = headers.get("www-authenticate");
  if (!/^\s*bearer\b/i.test(header ?? "")) return false;
  const { parseBearerChallenge } = await import("../../../auth/index.js");
  const metadataUrl = parseBearerChallenge(header).resourceMetadataUrl;
  if (!metadataUrl || !URL.canParse(metadataUrl)) return true;
  try {
    const metadata = await exchange(new URL(metadataUrl), {
      method: "GET",
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    });
    // Bounded like every read of a server's body: metadata is a few KiB, never hundreds of megabytes.
    const text = await readBoundedText(metadata, {
      maxBytes: MAX_METADATA_BYTES,
      what: "the resource metadata",
    });
    const { resource } = JSON.parse(text) as { resource?: unknown };
    const trimmed = (value: string) => value.replace(/\/+$/, "");
    if (typeof resource !== "string") return false;
    // Some servers name their origin as the one resource: then an `/mcp` path is taken as the endpoint.
    return (
      trimmed(resource) === trimmed(url.href) ||
      (trimmed(resource) === url.origin && /\/mcp\/?$/.test(url.pathname))
    );
  } catch {
    return false;
  }
}
