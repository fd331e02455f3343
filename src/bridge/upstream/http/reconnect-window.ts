/** The one reconnect window of both upstreams: how long a request that never reached the server waits for it to come back, and how often it tries. */

/** How long requests wait for a server that went away (`CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS` overrides it). */
export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
/** A server this bridge never reached is more likely down or mistyped than restarting: the first request waits less. */
export const FIRST_CONTACT_WINDOW_MS = 3000;
/** The first wait between tries; it doubles up to MAX_RETRY_DELAY_MS. */
export const FIRST_RETRY_DELAY_MS = 200;
export const MAX_RETRY_DELAY_MS = 5000;

/** The window for one recovery: the configured one, or the shorter first-contact one before the server ever answered. */
export function reconnectWindowMs(configured: number | undefined, firstContact: boolean): number {
  const window = configured ?? DEFAULT_RECONNECT_WINDOW_MS;
  return firstContact ? Math.min(FIRST_CONTACT_WINDOW_MS, window) : window;
}

/** The wait after `delayMs` (doubling, bounded). */
export function nextRetryDelay(delayMs: number): number {
  return Math.min(delayMs * 2, MAX_RETRY_DELAY_MS);
}
