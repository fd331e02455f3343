/** The credentials the era and live checks send: the stored login, which may sign in again only under `--sign-in`. */

import { AuthRequiredError } from "../../../auth/errors.js";
import { createBridgeLog } from "../../log.js";
import {
  type BridgeAuth,
  createRemoteFetch,
  type FetchLike,
  nodeHttpFetch,
  RemoteHttpError,
} from "../../upstream/http/index.js";
import { boundedSignal, checkedUrl, type DoctorContext, loginCommand } from "../check.js";

/** The login the requests carry: none when the server answers without one. */
export async function liveAuth(context: DoctorContext): Promise<BridgeAuth | undefined> {
  if (!context.found.needsAuth) return undefined;
  const session = await context.session();
  if (context.options.signIn) return session;
  return {
    accessToken: () => session.accessToken(),
    proofSigner: () => session.proofSigner(),
    recover: async () => {
      throw new AuthRequiredError("the server refused the stored login", "failed");
    },
  };
}

/** The bridge's fetch with the login and `--header`s, every exchange stopped when the check's deadline passes. */
export async function liveFetch(context: DoctorContext, signal: AbortSignal): Promise<FetchLike> {
  return createRemoteFetch({
    auth: await liveAuth(context),
    headers: context.options.headers,
    log: quietLog(),
    fetch: (url, request) =>
      nodeHttpFetch(url, { ...request, signal: boundedSignal(signal, request.signal) }),
  });
}

/** Its log stays quiet: each check reports what it found. */
export const quietLog = () => createBridgeLog({ debug: false, silent: true });

/** Whether an error means the server refused the login. */
export function isAuthFailure(error: unknown): boolean {
  const status = error instanceof RemoteHttpError ? error.status : undefined;
  return (
    status === 401 ||
    error instanceof AuthRequiredError ||
    (error as { cause?: unknown } | undefined)?.cause instanceof AuthRequiredError
  );
}

/** The fix for a failed live exchange. */
export function liveFix(error: unknown, context: DoctorContext): string {
  return isAuthFailure(error)
    ? `sign in again with: ${loginCommand(checkedUrl(context), context.options)}`
    : "run the bridge with --debug and look at the log file for the exchange";
}
