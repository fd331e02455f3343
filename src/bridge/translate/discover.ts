/** Where a legacy client's `initialize` is answered from a modern server's `server/discover` result (and the bridge's own discover). */
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";
import {
  BRIDGE_INFO,
  LATEST_LEGACY_VERSION,
  LATEST_MODERN_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  META_SERVER_INFO,
  MODERN_PROTOCOL_VERSIONS,
} from "../messages/request-model.js";
import { withoutLegacyTasks } from "./tasks.js";

/** The revision a legacy client gets: the one it asked for when the bridge speaks it, else the newest legacy one. */
export function negotiatedLegacyVersion(requested: unknown): string {
  return typeof requested === "string" && LEGACY_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : LATEST_LEGACY_VERSION;
}

/** An InitializeResult for a legacy client, built from a modern server's DiscoverResult. */
export function initializeResultFromDiscover(discover: Json, requestedVersion: unknown): Json {
  const meta = isObject(discover._meta) ? discover._meta : {};
  const serverInfo = isObject(meta[META_SERVER_INFO]) ? meta[META_SERVER_INFO] : BRIDGE_INFO;
  const capabilities = isObject(discover.capabilities) ? { ...discover.capabilities } : {};
  // The bridge answers logging/setLevel itself (it becomes the per-request log level), so a legacy client may send it.
  capabilities.logging ??= {};
  return {
    protocolVersion: negotiatedLegacyVersion(requestedVersion),
    capabilities,
    serverInfo,
    ...(typeof discover.instructions === "string" ? { instructions: discover.instructions } : {}),
  };
}

/** The InitializeResult while signing in: the remembered server's face or the bridge's, with tool list changes. */
export function signedOutInitializeResult(
  requestedVersion: unknown,
  serverUrl: string,
  discover?: Json,
): Json {
  const result = discover
    ? initializeResultFromDiscover(discover, requestedVersion)
    : {
        protocolVersion: negotiatedLegacyVersion(requestedVersion),
        capabilities: { ...structuredClone(RELAYED_CAPABILITIES), logging: {} },
        serverInfo: BRIDGE_INFO,
        instructions: `chat-mcp-bridge relays ${serverUrl}; its tools appear once you have signed in.`,
      };
  const declared = isObject(result.capabilities) ? result.capabilities : {};
  const tools = isObject(declared.tools) ? declared.tools : {};
  return { ...result, capabilities: { ...declared, tools: { ...tools, listChanged: true } } };
}

/**
 * What the bridge relays while signed out: a host that saw no `tools` would never list them (and never bring the
 * sign-in), and it hears them change once signed in. The server's own answer replaces these once known.
 */
const RELAYED_CAPABILITIES: Json = { tools: { listChanged: true }, prompts: {}, resources: {} };

/** The DiscoverResult for a stdio `server/discover`: a modern server's own, else the bridge's dual-era face. */
export function bridgeDiscoverResult(
  serverDiscover: Json | undefined,
  capabilities: Json = RELAYED_CAPABILITIES,
): Json {
  if (serverDiscover) return { ...serverDiscover, resultType: "complete" };
  return {
    resultType: "complete",
    ttlMs: 0,
    cacheScope: "private",
    supportedVersions: [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS],
    capabilities: structuredClone(capabilities),
    _meta: { [META_SERVER_INFO]: BRIDGE_INFO },
  };
}

/**
 * A 2025 server's result for a 2026-07-28 client: complete, without the core's tasks, and, on everything but a
 * call's outcome, the most conservative cache hints (one rule, not a list of methods: a missing hint makes a
 * client refuse the answer, as the SDK's SkillsClient does; a needless one is ignored).
 */
export function asModernResult(method: string, result: Json): Json {
  const modern: Json = { ...withoutLegacyTasks(method, result), resultType: "complete" };
  if (method !== "tools/call" && !method.startsWith("tasks/")) {
    modern.ttlMs ??= 0;
    modern.cacheScope ??= "private";
  }
  return modern;
}

/** A DiscoverResult for a modern client, built from a legacy server's InitializeResult. */
export function discoverFromInitializeResult(initialize: Json): Json {
  return {
    resultType: "complete",
    ttlMs: 0,
    cacheScope: "private",
    supportedVersions: [LATEST_MODERN_VERSION],
    capabilities: isObject(initialize.capabilities)
      ? withoutLegacyTasks("initialize", initialize).capabilities
      : {},
    ...(typeof initialize.instructions === "string" ? { instructions: initialize.instructions } : {}),
    _meta: { [META_SERVER_INFO]: isObject(initialize.serverInfo) ? initialize.serverInfo : BRIDGE_INFO },
  };
}
