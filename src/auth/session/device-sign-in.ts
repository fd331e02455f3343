/** Sign-in with a device code (RFC 8628), loaded only when one happens: the device authorization request, the code shown to the person, the token endpoint polled until they decide. */
import { setTimeout as sleep } from "node:timers/promises";
import {
  fetchToken,
  type OAuthClientProvider,
  OAuthError,
  type OAuthTokens,
} from "@modelcontextprotocol/client";
import * as z from "zod";
import { rememberSecret } from "../../internal/redact.js";
import { assertSecureUrl, deviceAuthorizationEndpoint } from "../checks.js";
import { boundedMetadataFetch, type DiscoveredServer } from "../discovery.js";
import { dpopKeyForSignIn, withDpopProof } from "../dpop.js";
import { AuthRequiredError, messageOf, SignInWaitingError } from "../errors.js";
import { checkShownUrl } from "../shown-url.js";
import { type DeviceCodePrompt, presentDeviceCode, waitingMessage } from "../sign-in-prompt.js";
import type { StoredClient, StoredDpopKey, StoredLogin } from "../stored-login.js";
import { toStoredTokens } from "../token-lifetime.js";
import {
  loginAndScope,
  type PersonSignInInput,
  type SessionContext,
  saveClientBeforeSignIn,
  saveSignedIn,
} from "./context.js";
import { chooseClient, DEVICE_CODE_GRANT_TYPE } from "./registration.js";
import { authenticateClient, requestTokens } from "./token-endpoint.js";

/** RFC 8628 §3.2: the interval when the server names none. */
const DEFAULT_INTERVAL_S = 5;
/** RFC 8628 §3.5: what each `slow_down` adds to the interval. */
const SLOW_DOWN_STEP_MS = 5_000;
/** The longest pause between polls when backing off from an unreachable or overloaded server. */
const MAX_BACKOFF_MS = 60_000;

const DeviceAuthorizationSchema = z
  .object({
    device_code: z.string().min(1).max(4096),
    user_code: z.string().min(1).max(64),
    verification_uri: z.string().max(2048).optional(),
    // The name some providers used before the RFC settled on `verification_uri`.
    verification_url: z.string().max(2048).optional(),
    verification_uri_complete: z.string().max(2048).optional(),
    expires_in: z.coerce.number().positive(),
    interval: z.coerce.number().nonnegative().optional(),
  })
  .refine((answer) => answer.verification_uri ?? answer.verification_url, "verification_uri is missing");
type DeviceAuthorization = z.infer<typeof DeviceAuthorizationSchema>;

const OAuthErrorBodySchema = z.object({
  error: z.string().max(200),
  error_description: z.string().max(1000).optional(),
});

/** Signs in with a device code under the lock the caller holds, and saves the login. */
export async function signInWithDeviceCode(
  context: SessionContext,
  input: PersonSignInInput,
): Promise<StoredLogin> {
  const { options } = context;
  const server = await context.metadata.get(input.resourceMetadataUrl);
  const endpoint = deviceAuthorizationEndpoint(server.metadata);
  if (!endpoint) {
    throw new AuthRequiredError(
      `The authorization server ${server.authorizationServerUrl} does not offer sign-in with a device code ` +
        "(its metadata names no device_authorization_endpoint); sign in with a browser instead (leave out --device-code).",
      "refused",
    );
  }
  assertSecureUrl(endpoint, "device authorization endpoint", options.allowHttp);
  const { current, sameServer, scope } = await loginAndScope(context, server, input);
  let client = await chooseClient(context, server, undefined, scope, sameServer ? current : undefined);
  let started = await requestDeviceAuthorization(context, server, endpoint, client, scope);
  if (started === "unknown-client" && client.source === "dynamic") {
    context.log("info", "The server no longer knows this client's registration; registering again.");
    client = await chooseClient(context, server, undefined, scope, undefined);
    started = await requestDeviceAuthorization(context, server, endpoint, client, scope);
  }
  if (started === "unknown-client") {
    throw new AuthRequiredError(
      `The authorization server ${server.authorizationServerUrl} does not know the client "${client.client_id}" ` +
        "(invalid_client); check --client-id (and $CHAT_MCP_CLIENT_SECRET) or --client-metadata-url.",
      "refused",
    );
  }
  rememberSecret(started.device_code);
  let login = await saveClientBeforeSignIn(context, {
    server,
    client,
    scope,
    current,
    sameServer,
    strictSave: input.strictSave,
  });

  const prompt = promptOf(started, options.allowHttp);
  const waitMs = Math.min(context.authTimeoutMs, started.expires_in * 1000);
  presentDeviceCode(prompt, { waitMs, log: context.log });
  const message = waitingMessage(prompt.url, "device-code", {
    loginCommand: input.loginCommand,
    authTimeoutMs: waitMs,
    deviceCode: prompt,
  });
  input.userMustAct(new SignInWaitingError(message, prompt.url, "device-code"));

  const dpopKey = await dpopKeyForSignIn(context.options, server.metadata, login);
  const fresh = await pollForTokens(context, server, client, started, waitMs, input.loginCommand, dpopKey);
  const tokens = toStoredTokens(fresh.tokens, {
    ...context.options,
    idTokenFrom: { issuer: server.issuer, clientId: client.client_id },
    scope,
    account: fresh.account,
  });
  login = { ...login, dpopKey, tokens, savedAt: Date.now() };
  const how = `Signed in to ${context.serverUrl} with a device code.`;
  return saveSignedIn(context, login, input.strictSave, how);
}

/** RFC 8628 §3.1: the device authorization request, authenticated as the token endpoint would be. */
async function requestDeviceAuthorization(
  context: SessionContext,
  server: DiscoveredServer,
  endpoint: string,
  client: StoredClient,
  scope: string | undefined,
): Promise<DeviceAuthorization | "unknown-client"> {
  const headers = new Headers({
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  });
  const form = new URLSearchParams();
  authenticateClient(client, server.metadata?.token_endpoint_auth_methods_supported ?? [], headers, form);
  if (scope) form.set("scope", scope);
  form.set("resource", server.resource);
  const response = await boundedMetadataFetch(context.fetchFn)(endpoint, {
    method: "POST",
    headers,
    body: form,
  });
  const json: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const refusal = OAuthErrorBodySchema.safeParse(json);
    const code = refusal.success ? refusal.data.error : `HTTP ${response.status}`;
    if (code === "invalid_client") return "unknown-client";
    const detail =
      refusal.success && refusal.data.error_description ? `: ${refusal.data.error_description}` : "";
    throw new AuthRequiredError(
      `The authorization server refused the device code request (${messageOf(`${code}${detail}`)}).`,
      "refused",
    );
  }
  const parsed = DeviceAuthorizationSchema.safeParse(json);
  if (!parsed.success) {
    throw new AuthRequiredError(
      `The authorization server's device code answer is not usable (${messageOf(parsed.error.issues[0]?.message ?? "invalid")}).`,
      "failed",
    );
  }
  return parsed.data;
}

/** What the person is shown, checked: http(s) URLs only (plain http on loopback or with --allow-http). */
function promptOf(started: DeviceAuthorization, allowHttp: boolean | undefined): DeviceCodePrompt {
  const complete = started.verification_uri_complete;
  const url = complete ?? started.verification_uri ?? started.verification_url ?? "";
  const { href } = checkShownUrl(url, "verification URL");
  assertSecureUrl(href, "verification URL", allowHttp);
  return { url: href, userCode: started.user_code, complete: complete !== undefined };
}

/** RFC 8628 §3.4-3.5: polls at the interval (5 s more after each `slow_down`) until tokens, a refusal or `waitMs`. */
async function pollForTokens(
  context: SessionContext,
  server: DiscoveredServer,
  client: StoredClient,
  started: DeviceAuthorization,
  waitMs: number,
  loginCommand: string,
  dpopKey: StoredDpopKey | undefined,
): Promise<{ tokens: OAuthTokens; account: string | undefined }> {
  const deadline = Date.now() + waitMs;
  let intervalMs = Math.max(1, started.interval ?? DEFAULT_INTERVAL_S) * 1000;
  // The device code grant as the SDK's token request sees it: a provider that only prepares the grant's parameters.
  const provider = {
    clientMetadata: { redirect_uris: [], grant_types: [DEVICE_CODE_GRANT_TYPE] },
    clientInformation: () => client,
    prepareTokenRequest: () =>
      new URLSearchParams({ grant_type: DEVICE_CODE_GRANT_TYPE, device_code: started.device_code }),
  } as unknown as OAuthClientProvider;
  const grant = withDpopProof(provider, dpopKey);
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new AuthRequiredError(
        `The device code was not approved within ${Math.round(waitMs / 1000)} s; nothing was granted. ` +
          `Run \`${loginCommand}\` to start again (--auth-timeout sets the wait).`,
        "timeout",
      );
    }
    await sleep(Math.min(intervalMs, remaining));
    try {
      // The vetted endpoint, as the other flows reach it: a plain http one that --allow-http allowed included.
      return await requestTokens(
        server,
        unansweredMarked(boundedMetadataFetch(context.fetchFn)),
        dpopKey,
        (endpoint) =>
          fetchToken(grant, endpoint.authorizationServerUrl, {
            metadata: endpoint.metadata,
            resource: server.resource,
            fetchFn: endpoint.fetchFn,
          }),
      );
    } catch (error) {
      const code = error instanceof OAuthError ? error.code : undefined;
      if (code === "authorization_pending") continue;
      if (code === "slow_down") {
        intervalMs += SLOW_DOWN_STEP_MS;
        continue;
      }
      if (code === "access_denied") {
        throw new AuthRequiredError(
          "The sign-in was denied in the browser (access_denied); nothing was granted.",
          "denied",
        );
      }
      if (code === "expired_token") {
        throw new AuthRequiredError(
          `The device code expired before it was approved (expired_token); nothing was granted. Run \`${loginCommand}\` to start again.`,
          "timeout",
        );
      }
      // RFC 8628 §3.5: a server that is unreachable or overloaded is asked less often, not given up on.
      if (
        code === "too_many_requests" ||
        code === "temporarily_unavailable" ||
        error instanceof PollUnanswered
      ) {
        context.log(
          "debug",
          `No tokens for the device code yet (${code ?? messageOf(error)}); asking less often.`,
        );
        intervalMs = Math.min(intervalMs * 2, MAX_BACKOFF_MS);
        continue;
      }
      const what = code ?? messageOf(error);
      throw new AuthRequiredError(
        `The authorization server refused the device code (${messageOf(what)}); run \`${loginCommand}\` to start again.`,
        "refused",
        { cause: error },
      );
    }
  }
}

/** A poll that got no answer (unreachable, timed out, body over the cap): asked again later, not a refusal. */
class PollUnanswered extends Error {
  override readonly name = "PollUnanswered";
}

function unansweredMarked(fetchFn: typeof fetch): typeof fetch {
  return (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    try {
      return await fetchFn(input, init);
    } catch (error) {
      throw new PollUnanswered(messageOf(error), { cause: error });
    }
  }) as typeof fetch;
}
