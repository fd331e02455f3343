/** What every flow of a session (refresh, sign-in, registration, sign-out) works with, handed over by OAuthSession, and the server metadata it learned. */
import type { DiscoveredServer } from "../discovery.js";
import type { AuthLog } from "../login-store.js";
import type { OAuthSessionOptions } from "./options.js";
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

/** What the session learned of its server (protected-resource and authorization server metadata): asked once, asked again after a refusal. */
export interface ServerMetadataOptions {
  resource?: string | undefined;
  fetchFn: typeof fetch;
  allowHttp: boolean;
  log: AuthLog;
}

export class ServerMetadata {
  #discovered?: { key: string; value: Promise<DiscoveredServer> };

  constructor(
    readonly serverUrl: string,
    private readonly options: ServerMetadataOptions,
  ) {}

  /**
   * The server's metadata, from `resourceMetadataUrl` when a challenge named one; shared by concurrent callers.
   * `deadline` (a sign-in's) ends the requests of a discovery this call starts.
   */
  get(resourceMetadataUrl?: string, deadline?: AbortSignal): Promise<DiscoveredServer> {
    const key = resourceMetadataUrl ?? "";
    if (this.#discovered?.key !== key) {
      // Discovery (zod schemas, SEP-2352 checks) loads only when a refresh, sign-in or sign-out needs it.
      const value = import("../discovery.js").then(({ discoverServer }) =>
        discoverServer(this.serverUrl, {
          resourceMetadataUrl,
          resource: this.options.resource,
          fetchFn: this.options.fetchFn,
          allowHttp: this.options.allowHttp,
          log: (message) => this.options.log("debug", message),
          signal: deadline,
        }),
      );
      this.#discovered = { key, value };
      // A failed discovery is not kept: the next attempt asks again.
      value.catch(() => {
        if (this.#discovered?.value === value) this.#discovered = undefined;
      });
    }
    return this.#discovered.value;
  }

  /** The server refused a token: its metadata may have moved to another authorization server (SEP-2352). */
  forget(): void {
    this.#discovered = undefined;
  }
}
