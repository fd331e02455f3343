/** Staying signed in: a refresh token spent for new tokens (loaded only when one is due), or the login dropped when the server refuses it. */
import { OAuthError, type OAuthTokens, refreshAuthorization } from "@modelcontextprotocol/client";
import type { StoredLogin } from "../stored-login.js";
import { toStoredTokens } from "../token-lifetime.js";
import type { SessionContext } from "./context.js";
import { requestTokens } from "./token-endpoint.js";

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
  let fresh: { tokens: OAuthTokens; account: string | undefined };
  const requestedAt = Date.now();
  try {
    fresh = await requestTokens(server, context.fetchFn, login.dpopKey, (endpoint, dpop) =>
      refreshAuthorization(endpoint.authorizationServerUrl, {
        metadata: endpoint.metadata,
        clientInformation: login.client!,
        refreshToken: tokens.refreshToken!,
        resource: context.options.disableResourceParameter ? undefined : (login.resource ?? server.resource),
        ...(dpop ? { dpop } : {}),
        fetchFn: endpoint.fetchFn,
      }),
    );
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
  if (context.options.useIdToken && !fresh.tokens.id_token) {
    // The new refresh token goes too: a sign-in is the way to a new ID token.
    context.log("info", "The refresh answer carried no ID token (--use-id-token); a new sign-in is needed.");
    await context.storage.persist({ ...login, tokens: undefined, savedAt: Date.now() }, false);
    return undefined;
  }
  const refreshed: StoredLogin = {
    ...login,
    tokens: toStoredTokens(
      fresh.tokens,
      {
        ...context.options,
        idTokenFrom: { issuer: server.issuer, clientId: login.client.client_id },
        scope: tokens.scope,
        account: fresh.account ?? tokens.account,
      },
      requestedAt,
    ),
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
function refusalCode(error: unknown): string | undefined {
  if (!(error instanceof OAuthError)) return undefined;
  return error.code === "server_error" || error.code === "temporarily_unavailable" ? undefined : error.code;
}
