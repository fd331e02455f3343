/** The token store check: where this login's tokens live (the keychain, or 0600 files), and that the keychain answers. */

import { loadKeychainBackend } from "../../../auth/keychain.js";
import { privateFile } from "../../../auth/token-store.js";
import type { Check, CheckResult } from "../check.js";

export const tokenStoreCheck: Check = {
  id: "token-store",
  title: "Token store",
  needs: [{ id: "proxy", whenFailed: "the proxy setting is not usable" }],
  // Loading a keychain module and asking the Secret Service over D-Bus can be slow on a cold machine.
  deadlineMs: () => 15_000,
  async run(context): Promise<CheckResult> {
    const { options } = context;
    const session = await context.session();
    const stored = await session.describeStorage().catch(() => undefined);
    if (stored && stored.kind !== "none")
      return { status: "pass", detail: `${stored.kind}: ${stored.location}` };
    if (options.tokenStore === "file")
      return { status: "pass", detail: `${privateFile()} (--token-store file)` };
    const { backend, failures } = await loadKeychainBackend();
    if (backend) {
      const name = backend.name === "keytar" ? "keytar" : "@napi-rs/keyring (OS keychain / Secret Service)";
      return { status: "pass", detail: `keychain via ${name}` };
    }
    if (options.tokenStore === "keychain") {
      return {
        status: "fail",
        detail: `no keychain answered (${failures.join("; ")})`,
        fix: "unlock or start the keyring (Secret Service), or pass --token-store file",
      };
    }
    return { status: "pass", detail: `${privateFile()} (no keychain answered: ${failures.join("; ")})` };
  },
};
