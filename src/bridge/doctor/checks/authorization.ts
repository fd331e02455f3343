/** The authorization checks: resource metadata, authorization server, client registration, token store and stored login. */

import { discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/client";
import { loadKeychainBackend } from "../../../auth/keychain.js";
import { privateFile } from "../../../auth/login-store.js";
import { proxyAwareFetch } from "../../../internal/proxy.js";
import { describeError } from "../../log/log.js";
import {
  type Check,
  type CheckResult,
  checkedUrl,
  type DoctorContext,
  loginCommand,
  signInAllowanceMs,
} from "../check.js";
import { assertionGrantResult } from "./assertion-grant.js";

/** The discovery checks run when the endpoint answered and asked for sign-in. */
const NEEDS_A_SIGN_IN_ENDPOINT: Pick<Check, "needs" | "skipWhen"> = {
  needs: [{ id: "endpoint", whenFailed: "the endpoint check failed" }],
  skipWhen: (context: DoctorContext) =>
    context.found.needsAuth ? undefined : "the server answers without sign-in",
};

/** The fetch the OAuth session uses: the given network's, else through the proxy when one applies. */
function discoveryFetch(context: DoctorContext): typeof fetch {
  return context.fetch ?? proxyAwareFetch({ env: context.env });
}

/** The protected resource metadata (RFC 9728): what the server says about itself and its authorization server. */
export const resourceMetadataCheck: Check = {
  id: "resource-metadata",
  title: "Protected resource metadata",
  ...NEEDS_A_SIGN_IN_ENDPOINT,
  deadlineMs: () => 15_000,
  async run(context) {
    const resourceMetadataUrl = context.found.endpoint?.resourceMetadataUrl;
    try {
      const metadata = await discoverOAuthProtectedResourceMetadata(
        checkedUrl(context).href,
        resourceMetadataUrl ? { resourceMetadataUrl } : undefined,
        discoveryFetch(context),
      );
      const scopes = metadata.scopes_supported?.join(" ");
      return {
        status: "pass",
        detail:
          `resource ${metadata.resource}; authorization server ${metadata.authorization_servers?.[0] ?? "not named"}` +
          (scopes ? `; scopes ${scopes}` : ""),
      };
    } catch (error) {
      return {
        status: "pass",
        detail: `none published (${describeError(error)}); the server's origin is taken as the authorization server`,
      };
    }
  },
};

/** The authorization server (RFC 8414): found as the bridge's sign-in finds it, and safe to use for this resource. */
export const authorizationServerCheck: Check = {
  id: "authorization-server",
  title: "Authorization server",
  ...NEEDS_A_SIGN_IN_ENDPOINT,
  deadlineMs: () => 20_000,
  async run(context) {
    const { discoverServer } = await import("../../../auth/discovery.js");
    const { options } = context;
    try {
      const discovered = await discoverServer(checkedUrl(context).href, {
        resourceMetadataUrl: context.found.endpoint?.resourceMetadataUrl,
        resource: options.resource,
        fetchFn: discoveryFetch(context),
        allowHttp: options.allowHttp,
        log: () => {},
      });
      context.found.authorizationServer = discovered;
      const endpoints = discovered.metadata
        ? ["authorize", "token", discovered.metadata.registration_endpoint ? "registration" : undefined]
            .filter(Boolean)
            .join(", ")
        : "no metadata: /authorize, /token and /register at its root";
      // Without RFC 8707's resource the server may issue tokens any of its resources accept.
      const resource = options.disableResourceParameter
        ? `resource ${discovered.resource} not sent (--disable-resource-parameter): tokens are not audience-bound to this server`
        : `resource ${discovered.resource}`;
      return { status: "pass", detail: `${discovered.authorizationServerUrl} (${endpoints}); ${resource}` };
    } catch (error) {
      const refused = /does not cover/.test(describeError(error));
      return {
        status: "fail",
        detail: describeError(error),
        fix: refused
          ? "check the URL; if the server's protected resource really differs from it, pass --resource <that resource>"
          : "the server's OAuth metadata is missing or unsafe: tell its operator",
      };
    }
  },
};

/** How this client will register: pre-registered, client ID metadata document, or dynamic (RFC 7591). */
export const registrationCheck: Check = {
  id: "registration",
  title: "Client registration",
  needs: [{ id: "authorization-server", whenFailed: "no authorization server" }],
  deadlineMs: () => 1000,
  async run({ options, found }): Promise<CheckResult> {
    const server = found.authorizationServer;
    if (!server) throw new Error("doctor: the registration check ran without an authorization server");
    if ((options.workloadTokenFile !== undefined || options.enterpriseIdp) && options.clientId) {
      const grantTypesSupported = server.metadata?.grant_types_supported;
      const idpIssuer = options.enterpriseIdp?.issuer;
      const { clientId, workloadTokenFile } = options;
      return assertionGrantResult({ clientId, workloadTokenFile, idpIssuer, grantTypesSupported });
    }
    if (options.clientCredentials && options.clientId) {
      const how = options.clientPrivateKeyFile
        ? "private_key_jwt with the key in --client-private-key"
        : "secret from $CHAT_MCP_CLIENT_SECRET";
      const metadata = server.metadata;
      const grants = metadata?.grant_types_supported;
      const methods = metadata?.token_endpoint_auth_methods_supported;
      if (grants && !grants.includes("client_credentials")) {
        return {
          status: "fail",
          detail: `the authorization server does not offer the client_credentials grant (it offers ${grants.join(", ")})`,
          fix: "sign in as a person instead: leave out --client-credentials",
        };
      }
      if (options.clientPrivateKeyFile && methods && !methods.includes("private_key_jwt")) {
        return {
          status: "fail",
          detail: `the authorization server does not take private_key_jwt (it takes ${methods.join(", ")})`,
          fix: "use the client's secret in $CHAT_MCP_CLIENT_SECRET instead of --client-private-key",
        };
      }
      return { status: "pass", detail: `client credentials as ${options.clientId}, ${how}; no browser` };
    }
    if (options.clientId) {
      const secret = options.clientSecret
        ? "secret from $CHAT_MCP_CLIENT_SECRET"
        : "no secret (public client)";
      return { status: "pass", detail: `pre-registered client ${options.clientId}, ${secret}` };
    }
    const metadataDocuments = server.metadata?.client_id_metadata_document_supported === true;
    if (options.clientMetadataUrl && metadataDocuments) {
      return { status: "pass", detail: `client ID metadata document ${options.clientMetadataUrl}` };
    }
    const note = options.clientMetadataUrl ? " (the server does not take client ID metadata documents)" : "";
    if (!server.metadata || server.metadata.registration_endpoint) {
      return { status: "pass", detail: `dynamic registration (RFC 7591)${note}` };
    }
    return {
      status: "fail",
      detail: `the server offers no dynamic registration${note}`,
      fix:
        "pass --client-id with a client registered for redirect URI http://127.0.0.1:<--callback-port>/callback " +
        "(its secret in $CHAT_MCP_CLIENT_SECRET)" +
        (metadataDocuments ? ", or --client-metadata-url" : ""),
    };
  },
};

/** Where this login's tokens live (the keychain, or 0600 files), and that the keychain answers. */
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

/** The stored login: scopes, expiry and whether it can be refreshed; with `--sign-in`, signs in when none is usable. */
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
