/** The request model both stdio faces produce (seam copy from the lead's brief; bridge23's version replaces it at merge). */

/** The client a request travels with: its era, protocol version, capabilities and info. */
export interface ClientContext {
  era: "legacy" | "modern";
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo?: { name?: string; version?: string; [key: string]: unknown };
}
