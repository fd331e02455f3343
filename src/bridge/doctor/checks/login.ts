/** The stored login check: scopes, expiry and whether it can be refreshed; with `--sign-in`, signs in when none is usable. */

import { describeError } from "../../log.js";
import { type Check, type CheckResult, checkedUrl, loginCommand, signInAllowanceMs } from "../check.js";

export const loginCheck: Check = {
  id: "login",
  title: "Stored login",
  needs: [{ id: "proxy", whenFailed: "the proxy setting is not usable" }],
  deadlineMs: ({ options }) => 15_000 + signInAllowanceMs(options),
  async run(context): Promise<CheckResult> {
    const { options, found } = context;
    const url = checkedUrl(context);
    const session = await context.session();
    // Whether the server asks for sign-in; undefined when the endpoint check could not tell.
    const required = found.endpoint && !found.endpoint.failed ? found.needsAuth : undefined;
    const loginFix = `sign in with: ${loginCommand(url, options)} (or run doctor with --sign-in)`;
    let summary = await session.describeLogin().catch(() => undefined);
    const now = Date.now();
    const unusable = (s: typeof summary) =>
      !s?.signedIn || (s.expiresAt !== undefined && s.expiresAt <= now && !s.refreshable);
    if (options.signIn && unusable(summary) && required === true) {
      try {
        await session.signIn();
        summary = await session.describeLogin();
      } catch (error) {
        return { status: "fail", detail: `sign-in failed: ${describeError(error)}`, fix: loginFix };
      }
    }
    if (!summary?.signedIn) {
      if (required === undefined)
        return {
          status: "skip",
          detail: "none stored (whether one is needed shows once the endpoint answers)",
        };
      if (!required)
        return { status: "pass", detail: "none, and none needed (the server answers without sign-in)" };
      return {
        status: "fail",
        detail: summary
          ? "a client registration but no tokens: the last sign-in did not finish or was dropped"
          : "not signed in",
        fix: loginFix,
      };
    }
    const scope = summary.scope ? `scopes ${summary.scope}` : "no scopes";
    const refresh = summary.refreshable ? "refresh possible" : "no refresh token";
    const bound = summary.dpopBound
      ? "; tokens DPoP-bound to the login's key"
      : "; bearer tokens (not DPoP-bound)";
    const client = `${summary.clientSource ? `; ${summary.clientSource} client` : ""}${bound}`;
    if (summary.expiresAt !== undefined && summary.expiresAt <= now) {
      const when = new Date(summary.expiresAt).toISOString();
      if (!summary.refreshable) {
        return {
          status: "fail",
          detail: `expired at ${when} and cannot be refreshed (no refresh token); ${scope}`,
          fix: loginFix,
        };
      }
      return {
        status: "pass",
        detail: `${scope}; access token expired at ${when}, refreshed on next use (${refresh})${client}`,
      };
    }
    const expiry =
      summary.expiresAt === undefined
        ? "no expiry given"
        : `expires ${new Date(summary.expiresAt).toISOString()} (in ${Math.round((summary.expiresAt - now) / 60_000)} min)`;
    return { status: "pass", detail: `${scope}; ${expiry}; ${refresh}${client}` };
  },
};
