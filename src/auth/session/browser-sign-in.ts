/** A person's sign-in, loaded only when one happens: the device code when asked for or when no browser can open, else the browser round trip (callback, PKCE and `state`, the browser, `iss`, the code for tokens). */
import { randomBytes } from "node:crypto";
import {
  exchangeAuthorization,
  OAuthError,
  type OAuthTokens,
  startAuthorization,
} from "@modelcontextprotocol/client";
import { Deadline } from "../../internal/deadline.js";
import { rememberSecret } from "../../internal/redact.js";
import { deviceAuthorizationEndpoint } from "../checks.js";
import { type DiscoveredServer, isExpectedIssuer } from "../discovery.js";
import { dpopKeyForSignIn } from "../dpop.js";
import { AuthRequiredError, messageOf, SignInWaitingError } from "../errors.js";
import { derivedCallbackPort } from "../login-key.js";
import { startLoopbackCallback } from "../loopback-callback.js";
import { assertBrowsableUrl } from "../open-url.js";
import {
  headlessReason,
  presentSignInUrl,
  refusedAnswerMessage,
  showDeviceCodeFallback,
  waitingMessage,
} from "../sign-in-prompt.js";
import type { StoredClient, StoredDpopKey, StoredLogin } from "../stored-login.js";
import { toStoredTokens } from "../token-lifetime.js";
import {
  loginAndScope,
  type PersonSignInInput,
  type SessionContext,
  saveClientBeforeSignIn,
  saveSignedIn,
} from "./context.js";
import { withAuthorizeParams } from "./provider-options.js";
import { chooseClient, refusesClient, unknownClientError } from "./registration.js";
import { requestTokens } from "./token-endpoint.js";

/**
 * Signs in under the lock the caller holds, and saves the login: with a device code when `--device-code` asks, or
 * when no browser can open here (known before any is tried) and the server offers it; else with the browser.
 */
export async function signIn(context: SessionContext, input: PersonSignInInput): Promise<StoredLogin> {
  const { options } = context;
  const withDeviceCode = async () =>
    (await import("./device-sign-in.js")).signInWithDeviceCode(context, input);
  if (options.deviceCode) return withDeviceCode();
  const headless = options.openBrowser !== false ? headlessReason(options.env ?? process.env) : undefined;
  if (
    headless &&
    deviceAuthorizationEndpoint((await context.metadata.get(input.resourceMetadataUrl)).metadata)
  ) {
    showDeviceCodeFallback(headless);
    return withDeviceCode();
  }
  const login = await signInWithBrowser(context, input);
  return login === "device-code" ? withDeviceCode() : login;
}

/**
 * Signs in through the user's browser under the lock the caller holds, and saves the login. `--auth-timeout`
 * bounds all of it, from discovery to the token request: one deadline, whose time each step gets what is left of.
 */
async function signInWithBrowser(
  context: SessionContext,
  input: PersonSignInInput,
): Promise<StoredLogin | "device-code"> {
  const { options } = context;
  const deadline = new Deadline(context.authTimeoutMs);
  const seconds = Math.round(context.authTimeoutMs / 1000);
  const timedOut = (what: string) => () =>
    new AuthRequiredError(
      `Sign-in timed out after ${seconds} s ${what}; sign in again (raise --auth-timeout if you need more time).`,
      "timeout",
    );
  // Registration, the client check and the token request end at the deadline too.
  const timed: SessionContext = { ...context, fetchFn: deadline.fetch(context.fetchFn) };
  // Only the bridge's relay answers at once: everything else is a command the person runs at a terminal.
  const atTerminal = !options.answerAtOnceWhenWaiting;
  const mustAct = (url: string) => {
    const message = waitingMessage(url, "no-browser", {
      loginCommand: input.loginCommand,
      authTimeoutMs: deadline.remainingMs(),
    });
    input.userMustAct(new SignInWaitingError(message, url, "no-browser"));
  };
  const server = await deadline.bound(
    context.metadata.get(input.resourceMetadataUrl, deadline.signal),
    timedOut("while asking the server where to sign in (its OAuth metadata)"),
  );
  const { current, sameServer, scope } = await loginAndScope(context, server, input);
  const callback = await startLoopbackCallback(
    {
      port: options.callbackPort ?? derivedCallbackPort(context.serverUrl),
      explicit: options.callbackPort !== undefined,
    },
    options.callbackHost,
    { callbackPath: options.callbackPath, successUrl: options.authSuccessUrl },
  );
  try {
    const registering = timedOut("while registering with the authorization server");
    let client = await deadline.bound(
      chooseClient(timed, server, callback.redirectUri, scope, sameServer ? current : undefined),
      registering,
    );
    // The verifier is kept per state: only the answer for this state can spend it.
    const state = randomBytes(32).toString("base64url");
    const authorize = (client: StoredClient) =>
      startAuthorization(server.authorizationServerUrl, {
        metadata: server.metadata,
        clientInformation: client,
        redirectUrl: callback.redirectUri,
        scope,
        state,
        resource: options.disableResourceParameter ? undefined : server.resource,
      }).then((started) => withAuthorizeParams(started, options.authorizeParams));
    let { authorizationUrl, codeVerifier } = await authorize(client);
    // A client not registered just now may be one the server no longer knows: its /authorize would show the
    // user an error page and leave this process waiting out the whole timeout.
    if (client === current?.client || client.source !== "dynamic") {
      if (await deadline.bound(refusesClient(timed, authorizationUrl), registering)) {
        if (client.source !== "dynamic") throw unknownClientError(client, server.authorizationServerUrl);
        context.log("info", "The server no longer knows this client's registration; registering again.");
        client = await deadline.bound(
          chooseClient(timed, server, callback.redirectUri, scope, undefined),
          registering,
        );
        ({ authorizationUrl, codeVerifier } = await authorize(client));
      }
    }
    let login = await saveClientBeforeSignIn(context, {
      server,
      client,
      scope,
      current,
      sameServer,
      strictSave: input.strictSave,
    });

    rememberSecret(codeVerifier);
    const verifiers = new Map([[state, codeVerifier]]);
    // The browser gets a one-time loopback start page, not this URL: `state` stays out of argv and stderr.
    assertBrowsableUrl(authorizationUrl.href);
    const pending = callback.begin(authorizationUrl.href, state, deadline.remainingMs(), {
      acceptsIssuer: (iss) => isExpectedIssuer(server, iss),
      // This sign-in's own answer, refused: no later answer will do, so it ends now, saying what to use instead.
      refusedAnswer: (why, opener) =>
        new AuthRequiredError(refusedAnswerMessage(why, opener, atTerminal), "refused"),
      timedOut: timedOut("without an answer from the browser"),
    });
    let ended = false;
    const answer = pending.answer.finally(() => {
      ended = true;
    });
    answer.catch(() => {});
    const shown = await presentSignInUrl(pending.startUrl, {
      openBrowser: options.openBrowser !== false,
      env: options.env,
      authTimeoutMs: deadline.remainingMs(),
      log: context.log,
      deviceCodeFallback: deviceAuthorizationEndpoint(server.metadata) !== undefined,
      answered: answer,
      onOpenerExit: () => pending.openerExited(),
    });
    // No browser opened, and the server offers the device code instead.
    if (shown === "device-code") return shown;
    // Ended already (an opener that is no browser, a refused answer): its reason is the news, not the opener's.
    if (!ended && shown === "not-opened") mustAct(pending.startUrl);
    else if (!ended) input.browserOpened?.(pending.startUrl);
    const { code, state: answeredState, iss } = await answer;

    const dpopKey = await dpopKeyForSignIn(context.options, server.metadata, login);
    const fresh = await deadline.bound(
      redeemCode(timed, server, {
        dpopKey,
        client,
        code,
        iss,
        codeVerifier: verifiers.get(answeredState)!,
        redirectUri: callback.redirectUri,
      }),
      timedOut("while redeeming the sign-in code"),
    );
    const tokens = toStoredTokens(fresh.tokens, {
      ...options,
      idTokenFrom: { issuer: server.issuer, clientId: client.client_id },
      scope,
      account: fresh.account,
    });
    login = { ...login, dpopKey, tokens, savedAt: Date.now() };
    return await saveSignedIn(context, login, input.strictSave, `Signed in to ${context.serverUrl}.`);
  } finally {
    await callback.close();
  }
}

/** The authorization code for tokens (and the account the token answer names); a refusal says what to do. */
async function redeemCode(
  context: SessionContext,
  server: DiscoveredServer,
  answer: {
    dpopKey: StoredDpopKey | undefined;
    client: StoredClient;
    code: string;
    iss?: string | undefined;
    codeVerifier: string;
    redirectUri: string;
  },
): Promise<{ tokens: OAuthTokens; account: string | undefined }> {
  try {
    return await requestTokens(server, context.fetchFn, answer.dpopKey, (endpoint, dpop) =>
      exchangeAuthorization(endpoint.authorizationServerUrl, {
        metadata: endpoint.metadata,
        clientInformation: answer.client,
        authorizationCode: answer.code,
        ...(answer.iss !== undefined ? { iss: answer.iss } : {}),
        codeVerifier: answer.codeVerifier,
        redirectUri: answer.redirectUri,
        resource: context.options.disableResourceParameter ? undefined : server.resource,
        ...(dpop ? { dpop } : {}),
        fetchFn: endpoint.fetchFn,
      }),
    );
  } catch (error) {
    const what = error instanceof OAuthError ? error.code : messageOf(error);
    const hint =
      what === "invalid_target"
        ? `it does not sign in to ${server.resource}: check the URL`
        : "sign in again";
    throw new AuthRequiredError(
      `The authorization server refused the sign-in code (${what}); ${hint}.`,
      "refused",
      { cause: error },
    );
  }
}
