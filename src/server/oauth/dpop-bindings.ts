/** Which tokens are DPoP-bound to which key (RFC 9449 `cnf.jkt`): kept in the store under each token's hash until the token expires. */
import { createHash } from "node:crypto";
import type { Store, StoreCollection } from "../store.js";

/** Expired bindings are swept after this many new ones, so the collection holds about as many as live tokens. */
const SWEEP_EVERY = 256;

interface Binding {
  jkt: string;
  /** Milliseconds since the epoch. */
  until: number;
}

export class DpopBindings {
  readonly #bindings: StoreCollection<Binding>;
  readonly #now: () => number;
  #sinceSweep = 0;

  constructor(store: Store, now: () => number) {
    this.#bindings = store.collection("oauth.dpop-bindings");
    this.#now = now;
  }

  /** Binds a token just issued, for as long as it lives. */
  bind(token: string, jkt: string, lifetimeMs: number): void {
    this.#sinceSweep += 1;
    if (this.#sinceSweep >= SWEEP_EVERY) this.#sweep();
    this.#bindings.set(hashOf(token), { jkt, until: this.#now() + lifetimeMs });
  }

  /** The thumbprint the token is bound to, or undefined (not bound, or past its lifetime). */
  keyOf(token: string): string | undefined {
    const binding = this.#bindings.get(hashOf(token));
    return binding && binding.until > this.#now() ? binding.jkt : undefined;
  }

  #sweep(): void {
    this.#sinceSweep = 0;
    const now = this.#now();
    for (const [hash, binding] of this.#bindings.entries())
      if (binding.until <= now) this.#bindings.delete(hash);
  }
}

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}
