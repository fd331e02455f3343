/** Staying signed in: a refresh token spent for new tokens (loaded only when one is due), or the login dropped when the server refuses it. */
import { OAuthError, type OAuthTokens, refreshAuthorization } from "@modelcontextprotocol/client";
import { dpopSessionOf } from "../dpop.js";
import type { StoredLogin } from "../stored-login.js";
import { toStoredTokens } from "../token-lifetime.js";
import type { SessionContext } from "./context.js";
import { resourceParameter } from "./provider-options.js";
import { accountRecordingFetch, tokenEndpointArguments } from "./token-endpoint.js";

/**
 * Refreshes `login` under the lock the caller holds and saves the result. Undefined (tokens dropped) when the
 * authorization server moved or refuses the refresh token; a failure to reach it is thrown.
 */
export async function refreshLogin(
  context: SessionContext,
  login: StoredLogin,
  resourceMetadataUrl?: string,
): Promise<StoredLogin | undefined> {
  const tokens = login.tokens!;
  const server = await context.metadata.get(resourceMetadataUrl);
  if (server.authorizationServerUrl !== login.authorizationServerUrl || !login.client) {
    await context.storage.persist({ ...login, tokens: undefined, savedAt: Date.now() }, false);
    return undefined;
  }
  let fresh: OAuthTokens;
  const answer = accountRecordingFetch(context.fetchFn);
  const dpop = login.dpopKey ? await dpopSessionOf(login.dpopKey) : undefined;
  const endpoint = tokenEndpointArguments(server, answer.fetchFn, dpop);
  const requestedAt = Date.now();
  try {
    fresh = await refreshAuthorization(endpoint.authorizationServerUrl, {
      metadata: endpoint.metadata,
      clientInformation: login.client,
      refreshToken: tokens.refreshToken!,
      resource: resourceParameter(context.options, login.resource ?? server.resource),
      ...(dpop ? { dpop } : {}),
      fetchFn: endpoint.fetchFn,
    });
  } catch (error) {
    const refused = refusalCode(error);
    if (refused === undefined) throw error;
    context.log("info", `The saved login was refused (${refused}); a new sign-in is needed.`);
    // invalid_client: the server forgot the registration (a restart without its data, an expiry), so it goes too.
    const forgotten = refused === "invalid_client" && login.client.source === "dynamic";
    await context.storage.persist(
      { ...login, tokens: undefined, ...(forgotten ? { client: undefined } : {}), savedAt: Date.now() },
      false,
    );
    return undefined;
  }
  if (context.options.useIdToken && !fresh.id_token) {
    // The new refresh token goes too: a sign-in is the way to a new ID token.
    context.log("info", "The refresh answer carried no ID token (--use-id-token); a new sign-in is needed.");
    await context.storage.persist({ ...login, tokens: undefined, savedAt: Date.now() }, false);
    return undefined;
  }
  const refreshed: StoredLogin = {
    ...login,
    tokens: {
      ...toStoredTokens(
        fresh,
        { ...context.options, idTokenFrom: { issuer: server.issuer, clientId: login.client.client_id } },
        requestedAt,
      ),
      scope: fresh.scope ?? tokens.scope,
      account: answer.account() ?? tokens.account,
    },
    savedAt: Date.now(),
  };
  await context.storage.persist(refreshed, false);
  context.log("debug", "Access token refreshed.");
  return refreshed;
}

/**
 * An OAuth error answer that says the grant or the client itself was refused (as opposed to `server_error` or
 * `temporarily_unavailable`, which a later attempt may get past): its code, else undefined.
 */
export function refusalCode(error: unknown): string | undefined {
  if (!(error instanceof OAuthError)) return undefined;
  return error.code === "server_error" || error.code === "temporarily_unavailable" ? undefined : error.code;
}
