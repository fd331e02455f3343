/** The one request model both stdio faces produce: a client request with the era, version, capabilities and identity it travels with; a modern request read from its `_meta` envelope. */

import type {
  ClientCapabilities,
  Implementation,
  JSONRPCMessage,
  LoggingLevel,
  RequestId,
} from "@modelcontextprotocol/client";
import { packageVersion } from "../../internal/package-version.js";
import { isJsonObject as isObject, type JsonObject as Json } from "./jsonrpc.js";

/** The bridge's own name and version, on what it sends or answers as itself. */
export const BRIDGE_INFO = { name: "chat-mcp-bridge", version: packageVersion() };

/** Protocol revisions of the 2026 era: stateless, `server/discover`, per-request `_meta`. */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;
/** The newest revision the bridge speaks in each era. */
export const LATEST_MODERN_VERSION = "2026-07-28";
export const LATEST_LEGACY_VERSION = "2025-11-25";
/** Revisions of the 2025 era (`initialize` and sessions) the bridge accepts from a client, newest first. */
export const LEGACY_PROTOCOL_VERSIONS = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

/** The reserved per-request `_meta` keys of 2026-07-28 (the SDK's `*_META_KEY`; test/bridge/request-model.test.ts keeps them equal). */
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_LOG_LEVEL = "io.modelcontextprotocol/logLevel";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";

export type ProtocolEra = "legacy" | "modern";

/** Who sent a request: the era its face speaks, and what it declared (at `initialize`, or in the request's `_meta`). */
export interface ClientContext {
  era: ProtocolEra;
  protocolVersion: string;
  capabilities: ClientCapabilities;
  clientInfo: Implementation;
  /** The level the client asked for (`logging/setLevel` in the legacy era, `_meta` in the modern one); none: no logs. */
  logLevel?: LoggingLevel;
}

/** A client request as both faces hand it on: JSON-RPC id and method, params without the era's envelope, and its client. */
export interface BridgeRequest {
  id: RequestId;
  method: string;
  /** The params as the client sent them, minus the reserved `io.modelcontextprotocol/*` `_meta` keys. */
  params: Record<string, unknown> | undefined;
  client: ClientContext;
  /** Aborted when the client cancels the request (`notifications/cancelled`) or the bridge shuts down. */
  signal: AbortSignal;
}

/** Messages to the stdio client; `relatedRequestId`: the request whose upstream stream carried a server message. */
export type ToClient = (message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId) => void;

/** What the era router (and the sign-in gate before it) needs of a relay, whichever its era. */
export interface EraRelay {
  fromClient(message: JSONRPCMessage): void;
  close(timeoutMs?: number): Promise<void> | void;
}

/** A context for a client that has said nothing about itself yet (a probe before `initialize`). */
export function anonymousClient(era: ProtocolEra): ClientContext {
  return {
    era,
    protocolVersion: era === "modern" ? LATEST_MODERN_VERSION : LATEST_LEGACY_VERSION,
    capabilities: {},
    clientInfo: implementationOf(undefined),
  };
}

/** A client's `clientInfo` as it declared it, when it has a name and a version. */
export function implementationOf(info: unknown): Implementation {
  return isObject(info) && typeof info.name === "string" && typeof info.version === "string"
    ? (info as Implementation)
    : { name: "unknown-client", version: "0" };
}

/** True when params carry the 2026 per-request envelope (its protocol version key): the sender is a modern client. */
export function hasModernEnvelope(params: unknown): boolean {
  if (!isObject(params) || !isObject(params._meta)) return false;
  return typeof params._meta[META_PROTOCOL_VERSION] === "string";
}

export function clientFromEnvelope(params: unknown): ClientContext {
  const meta = isObject(params) && isObject(params._meta) ? params._meta : {};
  const version = meta[META_PROTOCOL_VERSION];
  const capabilities = meta[META_CLIENT_CAPABILITIES];
  const level = meta[META_LOG_LEVEL];
  return {
    era: "modern",
    protocolVersion: typeof version === "string" ? version : LATEST_MODERN_VERSION,
    capabilities: isObject(capabilities) ? (capabilities as ClientCapabilities) : {},
    clientInfo: implementationOf(meta[META_CLIENT_INFO]),
    ...(typeof level === "string" ? { logLevel: level as LoggingLevel } : {}),
  };
}

/** Params without the reserved envelope keys (the original object when it had none). */
export function withoutEnvelope(params: unknown): Json | undefined {
  if (!isObject(params)) return undefined;
  if (!isObject(params._meta)) return params;
  const meta = params._meta;
  const reserved = [META_PROTOCOL_VERSION, META_CLIENT_INFO, META_CLIENT_CAPABILITIES, META_LOG_LEVEL];
  if (!reserved.some((key) => key in meta)) return params;
  const rest: Json = {};
  for (const [key, value] of Object.entries(meta)) if (!reserved.includes(key)) rest[key] = value;
  const { _meta: _dropped, ...others } = params;
  return Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others;
}

/** Params stamped with a client's envelope, as every modern request upstream must be. */
export function withEnvelope(params: Json | undefined, client: ClientContext, protocolVersion: string): Json {
  const meta: Json = {
    ...(isObject(params?._meta) ? params._meta : {}),
    [META_PROTOCOL_VERSION]: protocolVersion,
    [META_CLIENT_INFO]: client.clientInfo,
    [META_CLIENT_CAPABILITIES]: client.capabilities,
  };
  if (client.logLevel) meta[META_LOG_LEVEL] = client.logLevel;
  return { ...(params ?? {}), _meta: meta };
}

/** The era a request's sender speaks: its `_meta` envelope, or a `server/discover`, says modern; `initialize` legacy. */
export function requestEra(method: string, params: unknown): "legacy" | "modern" | undefined {
  if (method === "initialize") return "legacy";
  if (method === "server/discover" || hasModernEnvelope(params)) return "modern";
  return undefined;
}

export function modernRequest(
  id: BridgeRequest["id"],
  method: string,
  params: unknown,
  signal: AbortSignal,
): BridgeRequest {
  const client: ClientContext = clientFromEnvelope(params);
  return { id, method, params: withoutEnvelope(params), client, signal };
}
