/** Test helpers for the OAuth server and /mcp: a headless OAuthClientProvider, a cookie-keeping browser, raw PKCE steps. */
import { createHash, randomBytes } from "node:crypto";
import type {
  Client,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthTokens,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import {
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from "../../../src/server/index.js";
import type { McpEndpointOptions } from "../../../src/server/mcp/index.js";
import type { OAuthServerOptions } from "../../../src/server/options.js";
import { routeOrigin } from "../../support/fetch-routes.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../../support/reference-request.js";
import { connectMcpV2 } from "../mcp/connect-v2.js";

export type TestServerOptions = ReferenceServerOptions & OAuthServerOptions & McpEndpointOptions;

export function startTestServer(options: TestServerOptions = {}): Promise<ReferenceServer> {
  return startReferenceServer({ rateLimit: false, ...options });
}

/**
 * startTestServer without a port: the whole server's handler in-process, and plain `fetch` to its `url` (the helpers
 * here, the MCP SDK's transports, a ChatClient without a fetch of its own) answered by it until `close()`. Two at once
 * need two `url`s.
 */
export function startInProcessTestServer(
  options: Omit<TestServerOptions, "port" | "host" | "publicUrl"> & { url?: string } = {},
): RequestableReferenceServer {
  const server = createRequestableReferenceServer({ rateLimit: false, ...options });
  const unroute = routeOrigin(server.url, (request) => server.fetch(request));
  return {
    ...server,
    close: async () => {
      unroute();
      await server.close();
    },
  };
}

/** A clock tests can move forward (codes and tokens expire without waiting). */
export class TestClock {
  #offsetMs = 0;
  readonly now = (): number => Date.now() + this.#offsetMs;
  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}

export const CALLBACK_URL = "http://127.0.0.1:33418/callback";

/**
 * An OAuthClientProvider that "opens" the authorization URL by plain HTTP: it follows the server's redirects
 * (auto-approve) up to the loopback callback and keeps the code, as a browser and a callback server would.
 */
export class HeadlessOAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  savedTokens?: OAuthTokens;
  #verifier = "";
  #code?: string;
  authorizationCount = 0;
  /** The callback URL the authorization ended on (with code or error and state). */
  lastCallback?: URL;

  /**
   * Without `consent` the server must auto-approve; with it, the signed-in browser approves the consent page
   * for `consent.account`.
   */
  constructor(
    private readonly redirect = CALLBACK_URL,
    private readonly consent?: { browser: TestBrowser; account: string },
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "headless test client",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    return randomBytes(8).toString("hex");
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.savedTokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens = tokens;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationCount += 1;
    const callback = this.consent
      ? await approveOnConsentPage(authorizationUrl.href, this.consent.browser, this.consent.account)
      : await followToCallback(authorizationUrl.href, this.redirect);
    this.lastCallback = callback;
    this.#code = callback.searchParams.get("code") ?? undefined;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  takeCode(): string {
    const code = this.#code;
    if (!code) throw new Error(`The authorization ended without a code: ${this.lastCallback?.href}`);
    this.#code = undefined;
    return code;
  }
}

/** Follows redirects by hand until one points at the callback (whose server is not running). */
export async function followToCallback(
  url: string,
  callbackPrefix: string,
  cookies?: CookieJar,
): Promise<URL> {
  let next = url;
  for (let hop = 0; hop < 10; hop++) {
    if (next.startsWith(callbackPrefix)) return new URL(next);
    const response = await fetch(next, { redirect: "manual", headers: cookies ? cookies.header() : {} });
    cookies?.store(response);
    const location = response.headers.get("location");
    if (!location) throw new Error(`No redirect from ${next}: ${response.status} ${await response.text()}`);
    next = new URL(location, next).href;
  }
  throw new Error("Too many redirects");
}

/** Opens the authorization URL, then approves the consent page for `account` as the browser's signed-in person. */
export async function approveOnConsentPage(
  authorizationUrl: string,
  browser: TestBrowser,
  account: string,
): Promise<URL> {
  // The browser itself opens /authorize: the consent page only works where the request was started.
  const response = await browser.get(authorizationUrl);
  const consentPath = response.headers.get("location");
  if (!consentPath) throw new Error(`No consent redirect: ${response.status} ${await response.text()}`);
  const approved = await approveConsentAt(browser, consentPath, account);
  const location = approved.headers.get("location");
  if (!location) throw new Error(`Consent not approved: ${approved.status}`);
  return new URL(location);
}

/** Opens the consent page at `consentPath` in `browser` and approves it for `account`: the form's answer. */
export async function approveConsentAt(
  browser: TestBrowser,
  consentPath: string,
  account: string,
): Promise<Response> {
  const page = await (await browser.get(consentPath)).text();
  return browser.post("/oauth/consent", {
    request: hiddenField(page, "request"),
    csrf: hiddenField(page, "csrf"),
    account,
    decision: "approve",
  });
}

/** Connects an MCP SDK v2 client (legacy era), signing in through the provider when the server asks for it. */
export function connectMcp(
  mcpUrl: string,
  provider: HeadlessOAuthProvider,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  return connectMcpV2(mcpUrl, provider);
}

/** Cookies of one browser (name -> value), sent back on every request. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair?.indexOf("=") ?? -1;
      if (!pair || eq < 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header(): Record<string, string> {
    return this.#cookies.size ? { cookie: [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ") } : {};
  }
}

/** A browser with cookies: GET pages, POST forms, no automatic redirects. */
export class TestBrowser {
  readonly cookies = new CookieJar();
  constructor(
    private readonly baseUrl: string,
    /** The server's handler in-process (`createInProcessReferenceServer().fetch`), or the network. */
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  async get(path: string): Promise<Response> {
    const response = await this.fetchFn(new URL(path, this.baseUrl), {
      redirect: "manual",
      headers: this.cookies.header(),
    });
    this.cookies.store(response);
    return response;
  }

  async post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const response = await this.fetchFn(new URL(path, this.baseUrl), {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...this.cookies.header(), ...headers },
      body: new URLSearchParams(fields).toString(),
    });
    this.cookies.store(response);
    return response;
  }

  /** Signs in through the real /signin form. */
  async signIn(username: string, password = username): Promise<void> {
    const page = await (await this.get("/signin")).text();
    const response = await this.post("/signin", {
      username,
      password,
      csrf: hiddenField(page, "csrf"),
      next: "/",
    });
    if (response.status !== 303) throw new Error(`Sign-in failed: ${response.status}`);
  }
}

/** The value of a hidden input of an HTML page. */
export function hiddenField(page: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(page);
  if (!match?.[1]) throw new Error(`No hidden field ${name} in the page`);
  return match[1]
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** RFC 7591 registration of a client; returns the server's answer. */
export async function registerClient(
  baseUrl: string,
  metadata: Partial<OAuthClientMetadata> = {},
): Promise<{ client_id: string; client_secret?: string }> {
  const response = await fetch(`${baseUrl}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "raw test client",
      redirect_uris: [CALLBACK_URL],
      token_endpoint_auth_method: "none",
      ...metadata,
    }),
  });
  if (response.status !== 201)
    throw new Error(`Registration failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { client_id: string; client_secret?: string };
}

export function authorizeUrl(baseUrl: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${baseUrl}/authorize`);
  for (const [name, value] of Object.entries({
    response_type: "code",
    code_challenge_method: "S256",
    ...params,
  })) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.href;
}

/** POSTs a form to the token (or revocation) endpoint; returns status and JSON body. */
export async function postForm(
  url: string,
  fields: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.set(name, value);
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: form.toString(),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A full auto-approved sign-in by raw HTTP: register, authorize, exchange. */
export async function signInRaw(
  baseUrl: string,
  extra: { resource?: string; scope?: string } = {},
): Promise<{ clientId: string; tokens: OAuthTokens }> {
  const { client_id } = await registerClient(baseUrl);
  const { verifier, challenge } = pkcePair();
  const callback = await followToCallback(
    authorizeUrl(baseUrl, { client_id, redirect_uri: CALLBACK_URL, code_challenge: challenge, ...extra }),
    CALLBACK_URL,
  );
  const code = callback.searchParams.get("code");
  if (!code) throw new Error(`No code: ${callback.href}`);
  const { status, body } = await postForm(`${baseUrl}/token`, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    redirect_uri: CALLBACK_URL,
    client_id,
    ...(extra.resource ? { resource: extra.resource } : {}),
  });
  if (status !== 200) throw new Error(`Token exchange failed: ${status} ${JSON.stringify(body)}`);
  return { clientId: client_id, tokens: body as unknown as OAuthTokens };
}
