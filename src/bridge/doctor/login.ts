/** The authorization checks: resource metadata, authorization server, client registration, token store and stored login. */

import { discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/client";
import { discoverServer } from "../../auth/discovery.js";
import { loadKeychainBackend } from "../../auth/keychain.js";
import { privateFile } from "../../auth/login-store.js";
import { proxyAwareFetch } from "../../internal/proxy.js";
import { describeError } from "../log/log.js";
import {
  type CheckResult,
  check,
  type DoctorContext,
  type DoctorOptions,
  fail,
  loginCommand,
  pass,
  withSignIn,
} from "./check.js";

/** The fetch the OAuth session uses: the given network's, else through the proxy when one applies. */
const discoveryFetch = (context: DoctorContext) => context.fetch ?? proxyAwareFetch({ env: context.env });

/** The protected resource metadata (RFC 9728): what the server says about itself and its authorization server. */
export const resourceMetadataCheck = check(
  "resource-metadata",
  "Protected resource metadata",
  15_000,
  async (context) => {
    const resourceMetadataUrl = context.endpoint?.resourceMetadataUrl;
    try {
      const metadata = await discoverOAuthProtectedResourceMetadata(
        context.url.href,
        resourceMetadataUrl ? { resourceMetadataUrl } : undefined,
        discoveryFetch(context),
      );
      const scopes = metadata.scopes_supported?.join(" ");
      const server = metadata.authorization_servers?.[0] ?? "not named";
      return pass(
        `resource ${metadata.resource}; authorization server ${server}${scopes ? `; scopes ${scopes}` : ""}`,
      );
    } catch (error) {
      const detail = `none published (${describeError(error)}); the server's origin is taken as the authorization server`;
      return { status: "pass", detail };
    }
  },
);

/** The authorization server (RFC 8414): found as the bridge's sign-in finds it, and safe to use for this resource. */
export const authorizationServerCheck = check(
  "authorization-server",
  "Authorization server",
  20_000,
  async (context) => {
    const { options } = context;
    try {
      const discovered = await discoverServer(context.url.href, {
        resourceMetadataUrl: context.endpoint?.resourceMetadataUrl,
        resource: options.resource,
        fetchFn: discoveryFetch(context),
        allowHttp: options.allowHttp,
        log: () => {},
      });
      context.authorizationServer = discovered;
      const endpoints = discovered.metadata
        ? `authorize, token${discovered.metadata.registration_endpoint ? ", registration" : ""}`
        : "no metadata: /authorize, /token and /register at its root";
      // Without RFC 8707's resource the server may issue tokens any of its resources accept.
      const resource = options.disableResourceParameter
        ? `resource ${discovered.resource} not sent (--disable-resource-parameter): tokens are not audience-bound to this server`
        : `resource ${discovered.resource}`;
      return { status: "pass", detail: `${discovered.authorizationServerUrl} (${endpoints}); ${resource}` };
    } catch (error) {
      return {
        status: "fail",
        detail: describeError(error),
        fix: /does not cover/.test(describeError(error))
          ? "check the URL; if the server's protected resource really differs from it, pass --resource <that resource>"
          : "the server's OAuth metadata is missing or unsafe: tell its operator",
      };
    }
  },
);

/** How this client will register: an assertion or client credentials, pre-registered, metadata document, or dynamic (RFC 7591). */
export const registrationCheck = check(
  "registration",
  "Client registration",
  1000,
  async ({ options, authorizationServer }) => {
    const metadata = authorizationServer?.metadata;
    const grants = metadata?.grant_types_supported;
    if ((options.workloadTokenFile !== undefined || options.enterpriseIdp) && options.clientId)
      return assertionGrantResult(options.clientId, options, grants);
    if (options.clientCredentials && options.clientId) {
      const methods = metadata?.token_endpoint_auth_methods_supported;
      if (grants && !grants.includes("client_credentials"))
        return fail(
          `the authorization server does not offer the client_credentials grant (it offers ${grants.join(", ")})`,
          "sign in as a person instead: leave out --client-credentials",
        );
      if (options.clientPrivateKeyFile && methods && !methods.includes("private_key_jwt"))
        return fail(
          `the authorization server does not take private_key_jwt (it takes ${methods.join(", ")})`,
          "use the client's secret in $CHAT_MCP_CLIENT_SECRET instead of --client-private-key",
        );
      const how = options.clientPrivateKeyFile
        ? "private_key_jwt with the key in --client-private-key"
        : "secret from $CHAT_MCP_CLIENT_SECRET";
      return { status: "pass", detail: `client credentials as ${options.clientId}, ${how}; no browser` };
    }
    if (options.clientId) {
      const secret = options.clientSecret
        ? "secret from $CHAT_MCP_CLIENT_SECRET"
        : "no secret (public client)";
      return { status: "pass", detail: `pre-registered client ${options.clientId}, ${secret}` };
    }
    const metadataDocuments = metadata?.client_id_metadata_document_supported === true;
    if (options.clientMetadataUrl && metadataDocuments)
      return { status: "pass", detail: `client ID metadata document ${options.clientMetadataUrl}` };
    const note = options.clientMetadataUrl ? " (the server does not take client ID metadata documents)" : "";
    if (!metadata || metadata.registration_endpoint)
      return { status: "pass", detail: `dynamic registration (RFC 7591)${note}` };
    return fail(
      `the server offers no dynamic registration${note}`,
      "pass --client-id with a client registered for redirect URI http://127.0.0.1:<--callback-port>/callback " +
        `(its secret in $CHAT_MCP_CLIENT_SECRET)${metadataDocuments ? ", or --client-metadata-url" : ""}`,
    );
  },
);

/** A sign-in with an assertion (`--workload-token-file`, `--idp-*`): does the server offer the jwt-bearer grant; never reads a token. */
export function assertionGrantResult(
  clientId: string,
  options: Pick<DoctorOptions, "workloadTokenFile" | "enterpriseIdp">,
  grants: readonly string[] | undefined,
): CheckResult {
  const workload = options.workloadTokenFile !== undefined;
  if (grants && !grants.includes("urn:ietf:params:oauth:grant-type:jwt-bearer"))
    return fail(
      `the authorization server does not offer the jwt-bearer grant (it offers ${grants.join(", ")})`,
      workload
        ? "leave out --workload-token-file, or ask the server's operator to trust your platform's issuer"
        : "leave out the --idp-* flags, or ask the server's operator to trust your identity provider",
    );
  const what = workload
    ? `the workload token (the token in ${options.workloadTokenFile})`
    : `an ID-JAG (the ID token exchanged at ${options.enterpriseIdp?.issuer})`;
  return { status: "pass", detail: `jwt-bearer as ${clientId} with ${what}; no browser` };
}

/** Where this login's tokens live (the keychain, or 0600 files), and that the keychain answers. */
export const tokenStoreCheck = check("token-store", "Token store", 15_000, async (context) => {
  const { options } = context;
  const stored = await (await context.session()).describeStorage().catch(() => undefined);
  if (stored && stored.kind !== "none")
    return { status: "pass", detail: `${stored.kind}: ${stored.location}` };
  if (options.tokenStore === "file")
    return { status: "pass", detail: `${privateFile()} (--token-store file)` };
  const { backend, failures } = await loadKeychainBackend();
  if (backend) {
    const name = backend.name === "keytar" ? "keytar" : "@napi-rs/keyring (OS keychain / Secret Service)";
    return { status: "pass", detail: `keychain via ${name}` };
  }
  if (options.tokenStore === "keychain")
    return fail(
      `no keychain answered (${failures.join("; ")})`,
      "unlock or start the keyring (Secret Service), or pass --token-store file",
    );
  return { status: "pass", detail: `${privateFile()} (no keychain answered: ${failures.join("; ")})` };
});

/** The stored login: scopes, expiry and whether it can be refreshed; with `--sign-in`, signs in when none is usable. */
export const loginCheck = check("login", "Stored login", withSignIn(15_000), async (context) => {
  const { options, endpoint } = context;
  const session = await context.session();
  // Whether the server asks for sign-in; undefined when the endpoint check could not tell.
  const required = endpoint && !endpoint.failed ? endpoint.needsAuth : undefined;
  const fix = `sign in with: ${loginCommand(context.url, options)} (or run doctor with --sign-in)`;
  let summary = await session.describeLogin().catch(() => undefined);
  const now = Date.now();
  const expired = summary?.expiresAt !== undefined && summary.expiresAt <= now;
  if (options.signIn && required === true && (!summary?.signedIn || (expired && !summary.refreshable))) {
    try {
      await session.signIn();
      summary = await session.describeLogin();
    } catch (error) {
      return { status: "fail", detail: `sign-in failed: ${describeError(error)}`, fix };
    }
  }
  if (!summary?.signedIn) {
    if (required === undefined)
      return {
        status: "skip",
        detail: "none stored (whether one is needed shows once the endpoint answers)",
      };
    if (!required) return pass("none, and none needed (the server answers without sign-in)");
    const detail = summary
      ? "a client registration but no tokens: the last sign-in did not finish or was dropped"
      : "not signed in";
    return fail(detail, fix);
  }
  const scope = summary.scope ? `scopes ${summary.scope}` : "no scopes";
  const refresh = summary.refreshable ? "refresh possible" : "no refresh token";
  const bound = summary.dpopBound ? "tokens DPoP-bound to the login's key" : "bearer tokens (not DPoP-bound)";
  const client = `${summary.clientSource ? `; ${summary.clientSource} client` : ""}; ${bound}`;
  const { expiresAt } = summary;
  if (expiresAt === undefined)
    return { status: "pass", detail: `${scope}; no expiry given; ${refresh}${client}` };
  const when = new Date(expiresAt).toISOString();
  if (expiresAt > now) {
    const expiry = `expires ${when} (in ${Math.round((expiresAt - now) / 60_000)} min)`;
    return { status: "pass", detail: `${scope}; ${expiry}; ${refresh}${client}` };
  }
  if (!summary.refreshable)
    return fail(`expired at ${when} and cannot be refreshed (no refresh token); ${scope}`, fix);
  return pass(`${scope}; access token expired at ${when}, refreshed on next use (${refresh})${client}`);
});
