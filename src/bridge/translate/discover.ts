/** Where a legacy client's `initialize` is answered from a modern server's `server/discover` result (and the bridge's own discover). */
import {
  LATEST_LEGACY_VERSION,
  LATEST_MODERN_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  META_SERVER_INFO,
  MODERN_PROTOCOL_VERSIONS,
} from "../request-model.js";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The bridge's name on answers it makes itself. */
const BRIDGE_INFO = { name: "chat-mcp-bridge", version: "0.1.0" };

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

/**
 * The DiscoverResult the bridge answers a stdio `server/discover` with: the server's own (remembered) when it is
 * modern, else the bridge's dual-era face (the versions it speaks to clients, the capabilities the server gave).
 */
export function bridgeDiscoverResult(serverDiscover: Json | undefined, capabilities: Json = {}): Json {
  if (serverDiscover) return { ...serverDiscover, resultType: "complete" };
  return {
    resultType: "complete",
    supportedVersions: [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS],
    capabilities,
    _meta: { [META_SERVER_INFO]: BRIDGE_INFO },
  };
}

/** A DiscoverResult for a modern client, built from a legacy server's InitializeResult. */
export function discoverFromInitializeResult(initialize: Json): Json {
  return {
    resultType: "complete",
    supportedVersions: [LATEST_MODERN_VERSION],
    capabilities: isObject(initialize.capabilities) ? initialize.capabilities : {},
    ...(typeof initialize.instructions === "string" ? { instructions: initialize.instructions } : {}),
    _meta: { [META_SERVER_INFO]: isObject(initialize.serverInfo) ? initialize.serverInfo : BRIDGE_INFO },
  };
}
