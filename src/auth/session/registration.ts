/** Which client signs in: pre-registered (--client-id), a client ID metadata document, the stored registration, or a new one (RFC 7591) for the code or the device code grant. */
import { registerClient } from "@modelcontextprotocol/client";
import { readBoundedText } from "../../internal/bounded-body.js";
import type { DiscoveredServer } from "../discovery.js";
import { AuthRequiredError, messageOf } from "../errors.js";
import type { StoredClient, StoredLogin } from "../stored-login.js";
import type { SessionContext } from "./context.js";
import { SIGN_IN_CLIENT_METADATA } from "./provider-options.js";

const CLIENT_CHECK_TIMEOUT_MS = 5_000;
/** The most of the authorization endpoint's error page read: an `invalid_client` is said near its top. */
const ERROR_PAGE_BYTES = 16 * 1024;
/** RFC 8628 §3.4: the grant type a client registers for, and asks for at the token endpoint, to redeem a device code. */
export const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * The client for a sign-in redirected to `redirectUri`, or for a device code sign-in without one (nothing comes
 * back to this machine): the user's choice, else the stored registration when it fits the flow, else a new one.
 * `current` is the login stored for the same server.
 */
export async function chooseClient(
  context: SessionContext,
  server: DiscoveredServer,
  redirectUri: string | undefined,
  scope: string | undefined,
  current: StoredLogin | undefined,
): Promise<StoredClient> {
  const stored = current?.client;
  const chosen = clientChosenByUser(context, server, stored);
  if (chosen) return chosen;
  const fits = redirectUri
    ? stored?.redirect_uris.includes(redirectUri)
    : stored?.grant_types?.includes(DEVICE_CODE_GRANT_TYPE);
  if (stored?.source === "dynamic" && fits && !secretExpired(stored)) return stored;
  return registerDynamically(
    context,
    server,
    scope,
    redirectUri
      ? {
          redirect_uris: [redirectUri],
          grant_types: [...SIGN_IN_CLIENT_METADATA.grant_types],
          response_types: [...SIGN_IN_CLIENT_METADATA.response_types],
        }
      : { redirect_uris: [], grant_types: [DEVICE_CODE_GRANT_TYPE, "refresh_token"] },
  );
}

/** `--client-id` (with its secret) or `--client-metadata-url` where the server supports it, else undefined. */
function clientChosenByUser(
  context: SessionContext,
  server: DiscoveredServer,
  stored: StoredClient | undefined,
): StoredClient | undefined {
  const { clientId, clientSecret, clientMetadataUrl } = context.options;
  if (clientId) {
    if (
      stored?.source === "pre-registered" &&
      stored.client_id === clientId &&
      stored.client_secret === clientSecret
    ) {
      return stored;
    }
    return { client_id: clientId, client_secret: clientSecret, redirect_uris: [], source: "pre-registered" };
  }
  if (clientMetadataUrl && server.metadata?.client_id_metadata_document_supported === true) {
    if (stored?.source === "metadata-document" && stored.client_id === clientMetadataUrl) return stored;
    return { client_id: clientMetadataUrl, redirect_uris: [], source: "metadata-document" };
  }
  return undefined;
}

function secretExpired(client: StoredClient): boolean {
  return Boolean(client.client_secret_expires_at && client.client_secret_expires_at * 1000 < Date.now());
}

/** RFC 7591 registration for the flow's redirect URIs and grant types. */
async function registerDynamically(
  context: SessionContext,
  server: DiscoveredServer,
  scope: string | undefined,
  flow: { redirect_uris: string[]; grant_types: string[]; response_types?: string[] },
): Promise<StoredClient> {
  if (server.metadata && !server.metadata.registration_endpoint) {
    throw new AuthRequiredError(
      "The authorization server does not offer dynamic client registration; pass --client-id with a " +
        "pre-registered client (its secret in $CHAT_MCP_CLIENT_SECRET) or --client-metadata-url.",
      "refused",
    );
  }
  context.log("debug", "Registering this client with the authorization server.");
  const registered = await registerClient(server.authorizationServerUrl, {
    metadata: server.metadata,
    // The person's metadata over ours, then the fields the sign-in depends on (checked when the session was made).
    clientMetadata: {
      client_name: context.options.clientName ?? "chat-mcp-bridge",
      ...context.options.clientMetadata,
      // A program on the user's machine with a loopback redirect (RFC 8252), as MCP 2026-07-28 asks to say.
      application_type: "native",
      ...flow,
      token_endpoint_auth_method: "none",
    },
    scope:
      typeof context.options.clientMetadata?.scope === "string"
        ? context.options.clientMetadata.scope
        : scope,
    fetchFn: context.fetchFn,
  });
  const deviceGrant = flow.grant_types.includes(DEVICE_CODE_GRANT_TYPE);
  return {
    client_id: registered.client_id,
    client_secret: registered.client_secret,
    client_secret_expires_at: registered.client_secret_expires_at,
    token_endpoint_auth_method: registered.token_endpoint_auth_method,
    redirect_uris: registered.redirect_uris.length > 0 ? registered.redirect_uris : flow.redirect_uris,
    // Recorded for the device grant only, so a later device sign-in knows it may reuse this registration.
    ...(deviceGrant ? { grant_types: registered.grant_types ?? flow.grant_types } : {}),
    source: "dynamic",
  };
}

/**
 * Asks the authorization endpoint about this request as a browser would (redirects not followed): true only
 * when it answers that the client is unknown (`invalid_client`, as an error body or an error redirect).
 * Anything else, a failure to ask included, leaves the decision to the browser.
 */
export async function refusesClient(context: SessionContext, authorizationUrl: URL): Promise<boolean> {
  try {
    const response = await context.fetchFn(authorizationUrl.href, {
      redirect: "manual",
      signal: AbortSignal.timeout(CLIENT_CHECK_TIMEOUT_MS),
    });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const target =
        location && URL.canParse(location, authorizationUrl)
          ? new URL(location, authorizationUrl)
          : undefined;
      return target?.searchParams.get("error") === "invalid_client" && !target.searchParams.has("code");
    }
    if (response.status < 400 || response.status >= 500 || response.status === 429) {
      await response.body?.cancel();
      return false;
    }
    const page = await readBoundedText(response, {
      maxBytes: ERROR_PAGE_BYTES,
      what: "the authorization endpoint's error page",
      truncate: true,
    });
    return /\binvalid_client\b/.test(page);
  } catch (error) {
    context.log("debug", `Could not check the client with the authorization server: ${messageOf(error)}`);
    return false;
  }
}

/** A client id the user chose (`--client-id`, a metadata document URL) that the authorization server does not know. */
export function unknownClientError(client: StoredClient, authorizationServerUrl: string): AuthRequiredError {
  const what =
    client.source === "metadata-document"
      ? `the client metadata document ${client.client_id}`
      : `the client id "${client.client_id}"`;
  const fix =
    client.source === "metadata-document"
      ? "check --client-metadata-url"
      : "check --client-id against the client registered there (and $CHAT_MCP_CLIENT_SECRET)";
  return new AuthRequiredError(
    `The authorization server ${authorizationServerUrl} does not know ${what} (invalid_client); ${fix}, ` +
      "or leave the option out to register automatically.",
    "refused",
  );
}
