/** The loopback callback port a server's sign-ins prefer: stable per server URL, so a registration keeps matching. */
import { createHash } from "node:crypto";

/** 20000-29999, from a hash of the canonical server URL. */
export function derivedCallbackPort(serverUrl: string): number {
  return 20_000 + (createHash("sha256").update(serverUrl).digest().readUInt32BE(0) % 10_000);
}
