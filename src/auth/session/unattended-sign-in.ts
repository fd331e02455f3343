/** Signing in with no person, through the SDK's providers: the `client_credentials` grant (RFC 6749 §4.4) with a secret or a `private_key_jwt` assertion (RFC 7523 §2.2), or the jwt-bearer grant (RFC 7523 §2.1) with a workload's platform-issued token or an ID-JAG from an enterprise IdP (SEP-990). */
import { open } from "node:fs/promises";
import {
  buildDiscoveryUrls,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  fetchToken,
  type OAuthClientProvider,
  OAuthError,
  PrivateKeyJwtProvider,
  requestJwtAuthorizationGrant,
} from "@modelcontextprotocol/client";
import * as z from "zod";
import { rememberSecret } from "../../internal/redact.js";
import { assertSecureUrl } from "../checks.js";
import { boundedMetadataFetch, type DiscoveredServer } from "../discovery.js";
import { dpopKeyForSignIn, withDpopProof } from "../dpop.js";
import { AuthRequiredError, messageOf } from "../errors.js";
import type { StoredLogin } from "../stored-login.js";
import { toStoredTokens } from "../token-lifetime.js";
import {
  loginAndScope,
  type SessionContext,
  type SignInInput,
  saveSignedIn,
  storedLoginOf,
} from "./context.js";
import { requestTokens, tokenEndpointArguments } from "./token-endpoint.js";

/** Largest token file read: a platform's JWT is 1-2 KiB; an ID token with many claims stays under 16 KiB. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/**
 * Gets tokens for the configured client under the lock the caller holds, and saves the login: never the secret,
 * the key, a token of the files or an ID-JAG, so each new token is asked for with them again (the workload token
 * or the ID token of `--idp-id-token-file` read again then, since platforms rotate them).
 */
export async function signInUnattended(context: SessionContext, input: SignInInput): Promise<StoredLogin> {
  const { options } = context;
  const { clientId, workloadIdentity: workload } = options;
  const credentials = options.clientCredentials !== undefined;
  const privateKey = options.clientCredentials?.privateKey;
  const what = credentials ? "client credentials" : workload ? "workload token" : "enterprise sign-in";
  if (credentials && (!clientId || (!privateKey && !options.clientSecret))) {
    throw new AuthRequiredError(
      "Client credentials need --client-id and a secret in $CHAT_MCP_CLIENT_SECRET or --client-private-key.",
      "refused",
    );
  }
  if (!clientId) throw new AuthRequiredError("A sign-in with an assertion needs --client-id.", "refused");
  const server = await context.metadata.get(input.resourceMetadataUrl);
  const withheld = (login: string) =>
    `the ${what} ${credentials ? "are" : "is"} not sent there unless you run ${login} with ${credentials ? "them" : "it"}.`;
  const { current, scope } = await loginAndScope(context, server, input, { clientId, withheld });
  // The issuer the SDK holds the token endpoint to: the credentials are stamped with it and sent nowhere else.
  const expectedIssuer = server.metadata?.issuer ?? server.authorizationServerUrl;
  const provider = credentials
    ? credentialsProvider(context, clientId, expectedIssuer, scope)
    : assertionProvider(context, clientId, expectedIssuer, server.resource);
  const dpopKey = await dpopKeyForSignIn(options, server.metadata, current);
  let fresh: Awaited<ReturnType<typeof requestTokens>>;
  try {
    // The vetted endpoint, as the other flows reach it: a plain http one that --allow-http allowed included.
    fresh = await requestTokens(server, context.fetchFn, dpopKey, (endpoint) =>
      fetchToken(withDpopProof(provider, dpopKey), endpoint.authorizationServerUrl, {
        metadata: endpoint.metadata,
        resource: server.resource,
        scope,
        fetchFn: endpoint.fetchFn,
      }),
    );
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    context.log("debug", `The token endpoint refused the ${what}: ${messageOf(error)}`);
    const check = privateKey
      ? "the public key registered for it there"
      : credentials
        ? "$CHAT_MCP_CLIENT_SECRET and the methods the server takes"
        : workload
          ? "that the token in --workload-token-file is current and that the server trusts its issuer and audience"
          : "--client-id, $CHAT_MCP_CLIENT_SECRET and that the server trusts the identity provider";
    throw new AuthRequiredError(
      credentials
        ? `The authorization server refused the client credentials of "${clientId}" (${error.code}); check ${check}, ` +
            "and that the client may use the client_credentials grant."
        : `The authorization server refused the ${what} of "${clientId}" (${error.code}: ${messageOf(error.message)}); check ${check}.`,
      "refused",
      { cause: error },
    );
  }
  const login = storedLoginOf(context, server, {
    client: {
      client_id: clientId,
      redirect_uris: [],
      source: "pre-registered",
      ...(privateKey ? { token_endpoint_auth_method: "private_key_jwt" } : {}),
    },
    tokens: toStoredTokens(fresh.tokens, {
      useIdToken: credentials && options.useIdToken,
      idTokenFrom: { issuer: expectedIssuer, clientId },
      scope,
      account: fresh.account,
    }),
    dpopKey,
    requestedScope: scope,
  });
  const how = `Got an access token for ${context.serverUrl} with ${credentials ? "" : "the "}${what}.`;
  return saveSignedIn(context, login, input.strictSave, how);
}

/** The `client_credentials` grant, with the client secret or the `private_key_jwt` key of `--client-private-key`. */
function credentialsProvider(
  { options }: SessionContext,
  clientId: string,
  expectedIssuer: string,
  scope: string | undefined,
): OAuthClientProvider {
  const clientName = options.clientName ?? "chat-mcp-bridge";
  const privateKey = options.clientCredentials?.privateKey;
  return privateKey
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
}

/**
 * The jwt-bearer grant: the assertion is the workload token, or an ID-JAG the IdP exchanges the ID token for; a
 * secret, when the client has one, authenticates the client (Basic or post, as the server takes), else its
 * client_id alone.
 */
function assertionProvider(
  context: SessionContext,
  clientId: string,
  expectedIssuer: string,
  resource: string,
): OAuthClientProvider {
  const { options } = context;
  const { workloadIdentity: workload, enterpriseIdentity: enterprise } = options;
  const provider = new CrossAppAccessProvider({
    clientId,
    clientSecret: options.clientSecret as string,
    clientName: options.clientName ?? "chat-mcp-bridge",
    expectedIssuer,
    fetchFn: context.fetchFn,
    assertion: async (grant) => {
      if (workload) return readTokenFile(workload.tokenFile, "--workload-token-file");
      const idp = enterprise as NonNullable<typeof enterprise>;
      rememberSecret(idp.idpClientSecret);
      const idToken = await readTokenFile(idp.idTokenFile, "--idp-id-token-file");
      try {
        const bounded = boundedMetadataFetch(grant.fetchFn as typeof fetch);
        const found = await idpTokenEndpoint(idp.idpIssuer, bounded);
        assertSecureUrl(found, "identity provider's token endpoint", options.allowHttp);
        // Plain http beyond loopback, which --allow-http allowed, is handed to the SDK as the one seam allows.
        const idpServer = { authorizationServerUrl: idp.idpIssuer, metadata: { token_endpoint: found } };
        const { metadata: idpMetadata, fetchFn: idpFetch } = tokenEndpointArguments(
          idpServer as unknown as DiscoveredServer,
          bounded,
        );
        const { jwtAuthGrant } = await requestJwtAuthorizationGrant({
          tokenEndpoint: idpMetadata?.token_endpoint ?? found,
          audience: grant.authorizationServerUrl,
          resource: grant.resourceUrl,
          idToken,
          clientId: idp.idpClientId,
          ...(idp.idpClientSecret ? { clientSecret: idp.idpClientSecret } : {}),
          ...(grant.scope ? { scope: grant.scope } : {}),
          fetchFn: idpFetch,
        });
        rememberSecret(jwtAuthGrant);
        return jwtAuthGrant;
      } catch (error) {
        context.log("debug", `The IdP's token exchange failed: ${messageOf(error)}`);
        throw new AuthRequiredError(
          `The identity provider ${idp.idpIssuer} did not exchange the ID token of --idp-id-token-file for an ` +
            `identity assertion (${messageOf(error)}); check --idp-client-id, $CHAT_MCP_IDP_CLIENT_SECRET and that the ` +
            "ID token has not expired.",
          "refused",
          { cause: error },
        );
      }
    },
  });
  provider.saveAuthorizationServerUrl(expectedIssuer);
  provider.saveResourceUrl?.(resource);
  return provider;
}

/** What is read of an IdP's metadata: its issuer and token endpoint (an IdP's OpenID document may lack the rest). */
const IdpMetadataSchema = z.object({ issuer: z.string(), token_endpoint: z.string().url() });

/**
 * The IdP's token endpoint from its RFC 8414 or OpenID Connect discovery document, read leniently (only `issuer`,
 * which must be the IdP's, and `token_endpoint` are needed), in the SDK's order of well-known addresses.
 */
async function idpTokenEndpoint(issuer: string, fetchFn: typeof fetch): Promise<string> {
  for (const { url } of buildDiscoveryUrls(issuer)) {
    const response = await fetchFn(url, { headers: { accept: "application/json" } });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      continue;
    }
    const parsed = IdpMetadataSchema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw new Error(`the metadata at ${url} has no issuer or token_endpoint`);
    if (parsed.data.issuer.replace(/\/+$/, "") !== issuer.replace(/\/+$/, "")) {
      throw new Error(`the metadata at ${url} names the issuer ${parsed.data.issuer}, not ${issuer}`);
    }
    return parsed.data.token_endpoint;
  }
  throw new Error(`no discovery document at ${issuer} names a token endpoint`);
}

/** A token file's contents, trimmed; read at each token request (platforms rotate them). Never shown. */
async function readTokenFile(path: string, flag: string): Promise<string> {
  let text: string;
  try {
    const file = await open(path, "r");
    try {
      const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
      const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
      if (bytesRead > MAX_TOKEN_FILE_BYTES) {
        throw new AuthRequiredError(
          `${flag} ${path} is larger than ${MAX_TOKEN_FILE_BYTES} bytes; it should hold one token.`,
          "refused",
        );
      }
      text = buffer.subarray(0, bytesRead).toString("utf8").trim();
    } finally {
      await file.close();
    }
  } catch (error) {
    if (error instanceof AuthRequiredError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new AuthRequiredError(
      `${flag} ${path} cannot be read (${typeof code === "string" ? code : "unreadable"}); check that the file exists and that this user may read it.`,
      "refused",
    );
  }
  if (text.length === 0 || /\s/.test(text)) {
    throw new AuthRequiredError(
      `${flag} ${path} is ${text.length === 0 ? "empty" : "not one token"}; it should hold one JWT.`,
      "refused",
    );
  }
  rememberSecret(text);
  return text;
}
