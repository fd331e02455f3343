/** Signing in with an assertion instead of a person (the jwt-bearer grant, RFC 7523 §2.1): a workload's platform-issued token, or an ID-JAG from an enterprise IdP (SEP-990), through the SDK's providers. */
import { open } from "node:fs/promises";
import {
  buildDiscoveryUrls,
  CrossAppAccessProvider,
  OAuthError,
  type OAuthTokens,
  requestJwtAuthorizationGrant,
} from "@modelcontextprotocol/client";
import * as z from "zod";
import { rememberSecret } from "../../internal/redact.js";
import { assertSecureUrl } from "../checks.js";
import { boundedMetadataFetch, type DiscoveredServer } from "../discovery.js";
import { dpopKeyForSignIn } from "../dpop.js";
import { AuthRequiredError, messageOf } from "../errors.js";
import type { StoredLogin } from "../stored-login.js";
import { toStoredTokens } from "../token-lifetime.js";
import type { SessionContext } from "./context.js";
import { storedLoginOf } from "./session-storage.js";
import { unattendedLoginAndScope } from "./sign-in-scope.js";
import { accountRecordingFetch, fetchTokenAt, tokenEndpointArguments } from "./token-endpoint.js";

/** Largest token file read: a platform's JWT is 1-2 KiB; an ID token with many claims stays under 16 KiB. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

export interface AssertionSignInInput {
  challengeScope?: string | undefined;
  alreadyGranted?: string | undefined;
  resourceMetadataUrl?: string | undefined;
  /** True for `login` commands: a store failure fails the sign-in, and a moved authorization server is trusted. */
  strictSave: boolean;
}

/**
 * Gets tokens with the workload token (`--workload-token-file`) or an ID-JAG for the ID token
 * (`--idp-id-token-file`), each file read again now, under the lock the caller holds; saves the login (never a
 * token of the files, an ID-JAG or a secret).
 */
export async function signInWithAssertion(
  context: SessionContext,
  input: AssertionSignInInput,
): Promise<StoredLogin> {
  const { options } = context;
  const { clientId, workloadIdentity: workload, enterpriseIdentity: enterprise } = options;
  const what = workload ? "workload token" : "enterprise sign-in";
  if (!clientId || (!workload && !enterprise)) {
    throw new AuthRequiredError("A sign-in with an assertion needs --client-id.", "refused");
  }
  const server = await context.metadata.get(input.resourceMetadataUrl);
  const { current, scope } = await unattendedLoginAndScope(
    context,
    server,
    input,
    clientId,
    (login) => `the ${what} is not sent there unless you run ${login} with it.`,
  );
  const expectedIssuer = server.metadata?.issuer ?? server.authorizationServerUrl;
  // The SDK's provider of the jwt-bearer grant: the assertion comes from the callback; a secret, when the client
  // has one, authenticates the client (Basic or post, as the server takes), else its client_id alone.
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
  provider.saveResourceUrl?.(server.resource);
  const answer = accountRecordingFetch(context.fetchFn);
  const dpopKey = await dpopKeyForSignIn(options, server.metadata, current);
  let tokens: OAuthTokens;
  try {
    tokens = await fetchTokenAt(server, provider, { dpopKey, fetchFn: answer.fetchFn, scope });
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    context.log("debug", `The token endpoint refused the ${what}: ${messageOf(error)}`);
    const check = workload
      ? "that the token in --workload-token-file is current and that the server trusts its issuer and audience"
      : "--client-id, $CHAT_MCP_CLIENT_SECRET and that the server trusts the identity provider";
    throw new AuthRequiredError(
      `The authorization server refused the ${what} of "${clientId}" (${error.code}: ${messageOf(error.message)}); check ${check}.`,
      "refused",
      { cause: error },
    );
  }
  const login = storedLoginOf(context, server, {
    client: { client_id: clientId, redirect_uris: [], source: "pre-registered" },
    tokens: { ...toStoredTokens(tokens), scope: tokens.scope ?? scope, account: answer.account() },
    dpopKey,
    requestedScope: scope,
  });
  await context.storage.persist(login, input.strictSave);
  context.log("debug", `Got an access token for ${context.serverUrl} with the ${what}.`);
  return login;
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
