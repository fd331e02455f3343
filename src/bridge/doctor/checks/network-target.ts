/** Where the network checks connect: the server itself, or the proxy when there is one (only its host and port shown). */

import { checkedUrl, type DoctorContext } from "../check.js";

/** How long each network step (lookup, connection, handshake) may take before its check says so. */
export const NETWORK_TIMEOUT_MS = 5_000;
/** The runner's deadline for a network check: past the step's own timeout, so the check's words win. */
export const NETWORK_DEADLINE_MS = NETWORK_TIMEOUT_MS + 2_000;

export interface NetworkTarget {
  host: string;
  port: number;
  /** How the target is named in the report: never the proxy URL, which may hold its credentials. */
  what: string;
}

export function networkTarget(context: DoctorContext): NetworkTarget {
  const url = checkedUrl(context);
  const proxy = context.found.proxy;
  const target = proxy?.url ?? url;
  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
  const what = proxy ? `the proxy ${host}:${port} (from ${proxy.source})` : `${host}:${port}`;
  return { host, port, what };
}
