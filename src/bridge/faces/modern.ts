/** The stdio face a 2026-07-28 client sees: stateless requests, each describing its client in `_meta`. */
import type { BridgeRequest, ClientContext } from "../messages/request-model.js";
import { clientFromEnvelope, hasModernEnvelope, withoutEnvelope } from "../messages/request-model.js";

/** The era a request's sender speaks: its `_meta` envelope, or a `server/discover`, says modern; `initialize` legacy. */
export function requestEra(method: string, params: unknown): "legacy" | "modern" | undefined {
  if (method === "initialize") return "legacy";
  if (method === "server/discover" || hasModernEnvelope(params)) return "modern";
  return undefined;
}

/** The request model of a modern request: its client from its envelope, its params without it. */
export function modernRequest(
  id: BridgeRequest["id"],
  method: string,
  params: unknown,
  signal: AbortSignal,
): BridgeRequest {
  const client: ClientContext = clientFromEnvelope(params);
  return { id, method, params: withoutEnvelope(params), client, signal };
}
