/** The legacy (2025) upstream: a session over streamable HTTP, relayed with recovery; its only door. */
export {
  BRIDGE_ERROR_CODE,
  LegacySessionRelay,
  type LegacySessionRelayOptions,
  type RemoteTransport,
} from "./legacy-upstream.js";
export { StreamableHttpTransport } from "./streamable-http-transport.js";
