/** Signing in with no person: the `client_credentials` grant (RFC 6749 §4.4) through the SDK's providers, with a client secret or a `private_key_jwt` assertion (RFC 7523 §2.2). */
import {
  ClientCredentialsProvider,
  OAuthError,
  type OAuthTokens,
  PrivateKeyJwtProvider,
} from "@modelcontextprotocol/client";
import { dpopKeyForSignIn } from "../dpop.js";
import { AuthRequiredError, messageOf } from "../errors.js";
import type { StoredLogin } from "../stored-login.js";
import { toStoredTokens } from "../token-lifetime.js";
import type { SessionContext } from "./context.js";
import { storedLoginOf } from "./session-storage.js";
import { unattendedLoginAndScope } from "./sign-in-scope.js";
import { accountRecordingFetch, fetchTokenAt } from "./token-endpoint.js";

export interface ClientCredentialsInput {
  challengeScope?: string | undefined;
  alreadyGranted?: string | undefined;
  resourceMetadataUrl?: string | undefined;
  /** True for `login` commands: a store failure fails the sign-in, and a moved authorization server is trusted. */
  strictSave: boolean;
}

/** Gets tokens for the configured client under the lock the caller holds, and saves the login (never the secret or key). */
export async function signInWithClientCredentials(
  context: SessionContext,
  input: ClientCredentialsInput,
): Promise<StoredLogin> {
  const { options } = context;
  const clientId = options.clientId;
  const privateKey = options.clientCredentials?.privateKey;
  if (!clientId || (!privateKey && !options.clientSecret)) {
    throw new AuthRequiredError(
      "Client credentials need --client-id and a secret in $CHAT_MCP_CLIENT_SECRET or --client-private-key.",
      "refused",
    );
  }
  const server = await context.metadata.get(input.resourceMetadataUrl);
  const { current, scope } = await unattendedLoginAndScope(
    context,
    server,
    input,
    clientId,
    (login) => `the client credentials are not sent there unless you run ${login} with them.`,
  );
  // The issuer the SDK holds the token endpoint to: the credentials are stamped with it and sent nowhere else.
  const expectedIssuer = server.metadata?.issuer ?? server.authorizationServerUrl;
  const clientName = options.clientName ?? "chat-mcp-bridge";
  const provider = privateKey
    ? new PrivateKeyJwtProvider({
        clientId,
        privateKey: privateKey.jwk,
        algorithm: privateKey.algorithm,
        clientName,
        scope,
        expectedIssuer,
      })
    : new ClientCredentialsProvider({
        clientId,
        clientSecret: options.clientSecret as string,
        clientName,
        scope,
        expectedIssuer,
      });
  const answer = accountRecordingFetch(context.fetchFn);
  const dpopKey = await dpopKeyForSignIn(context.options, server.metadata, current);
  let tokens: OAuthTokens;
  try {
    // The vetted endpoint, as the other flows reach it: a plain http one that --allow-http allowed included.
    tokens = await fetchTokenAt(server, provider, { dpopKey, fetchFn: answer.fetchFn, scope });
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    context.log("debug", `The token endpoint refused the client credentials: ${messageOf(error)}`);
    const check = privateKey
      ? "the public key registered for it there"
      : "$CHAT_MCP_CLIENT_SECRET and the methods the server takes";
    throw new AuthRequiredError(
      `The authorization server refused the client credentials of "${clientId}" (${error.code}); check ${check}, ` +
        "and that the client may use the client_credentials grant.",
      "refused",
      { cause: error },
    );
  }
  const login = storedLoginOf(context, server, {
    // Neither the secret nor the key is stored: each new token is asked for with them again.
    client: {
      client_id: clientId,
      redirect_uris: [],
      source: "pre-registered",
      ...(privateKey ? { token_endpoint_auth_method: "private_key_jwt" } : {}),
    },
    tokens: {
      ...toStoredTokens(tokens, {
        ...context.options,
        idTokenFrom: { issuer: expectedIssuer, clientId },
      }),
      scope: tokens.scope ?? scope,
      account: answer.account(),
    },
    dpopKey,
    requestedScope: scope,
  });
  await context.storage.persist(login, input.strictSave);
  context.log("debug", `Got an access token for ${context.serverUrl} with client credentials.`);
  return login;
}
