/** What every flow of a session (refresh, sign-in, registration, sign-out) works with, handed over by OAuthSession. */
import type { AuthLog } from "../login-store.js";
import type { OAuthSessionOptions } from "./options.js";
import type { ServerMetadata } from "./server-metadata.js";
import type { SessionStorage } from "./session-storage.js";

export interface SessionContext {
  /** The canonical protected resource URL. */
  readonly serverUrl: string;
  readonly options: OAuthSessionOptions;
  /** Discovery, registration, token and revocation requests (proxy-aware unless the options gave one). */
  readonly fetchFn: typeof fetch;
  /** Diagnostics; never receives tokens, codes, verifiers, secrets or header values. */
  readonly log: AuthLog;
  readonly authTimeoutMs: number;
  readonly storage: SessionStorage;
  readonly metadata: ServerMetadata;
}
