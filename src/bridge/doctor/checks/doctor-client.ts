/** Who doctor says it is on the wire: its client identity in each era, and the 2025 `initialize` it sends. */

import type { ClientContext } from "../../request-model.js";

/** doctor's identity on a 2026-07-28 request (its `_meta` envelope). */
export const DOCTOR_CLIENT: ClientContext = {
  era: "modern",
  protocolVersion: "2026-07-28",
  capabilities: {},
  clientInfo: { name: "chat-mcp-bridge-doctor", version: "1" },
};

/** The 2025 `initialize` request doctor sends a legacy server. */
export function legacyInitializeRequest(id: string) {
  return {
    jsonrpc: "2.0" as const,
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: DOCTOR_CLIENT.clientInfo.name, version: DOCTOR_CLIENT.clientInfo.version },
    },
  };
}
