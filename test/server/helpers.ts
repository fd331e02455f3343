/** Test helpers: a reference server (started on a port, or in-process), a JSON caller per API key, a cookie-keeping browser. */
import { afterAll, beforeAll } from "vitest";
import type { ReferenceServerOptions } from "../../src/server/context.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";

/** What the helpers call: a server on a port (fetched over the network) or an in-process one (its `request`). */
export type CallableServer = Pick<ReferenceServer, "url" | "apiKeys"> & {
  request?: (input: string, init?: RequestInit) => Promise<Response>;
};

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read loosely; the assertions check them.
type LooseJson = any;

/** Starts a server for the enclosing describe/file and closes it afterwards. */
export function useReferenceServer(options: ReferenceServerOptions = {}): { server: ReferenceServer } {
  const holder = {} as { server: ReferenceServer };
  beforeAll(async () => {
    holder.server = await startReferenceServer({ port: 0, host: "127.0.0.1", ...options });
  });
  afterAll(async () => {
    await holder.server?.close();
  });
  return holder;
}

export interface ApiResponse<T = LooseJson> {
  status: number;
  body: T;
  headers: Headers;
}

/** Calls `/v2` with a bearer token; `body` may be a string to send as is. */
export async function call<T = LooseJson>(
  server: CallableServer,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  const response = await (server.request ?? fetch)(`${server.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** A caller bound to one account's API key. */
export function apiFor(server: CallableServer, slug: string) {
  const token = server.apiKeys[slug];
  if (!token) throw new Error(`no API key for ${slug}`);
  return {
    get: <T = LooseJson>(path: string) => call<T>(server, token, "GET", path),
    post: <T = LooseJson>(path: string, body: unknown) => call<T>(server, token, "POST", path, body),
  };
}

/** A minimal browser: keeps cookies, does not follow redirects, reads hidden form fields. */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly baseUrl: string;
  readonly #fetch: (input: string, init?: RequestInit) => Promise<Response>;
  /** A base URL is fetched over the network; a server with `request` is called in-process. */
  constructor(server: string | CallableServer) {
    this.baseUrl = typeof server === "string" ? server : server.url;
    this.#fetch = (typeof server !== "string" && server.request) || fetch;
  }

  async get(path: string): Promise<{ status: number; text: string; location: string | null }> {
    return this.#request(path, { method: "GET" });
  }

  async post(
    path: string,
    form: Record<string, string>,
  ): Promise<{ status: number; text: string; location: string | null }> {
    return this.#request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** Signs in through the real form (CSRF included). */
  async signIn(username: string, password: string): Promise<void> {
    const page = await this.get("/signin");
    const response = await this.post("/signin", {
      csrf: hiddenField(page.text, "csrf"),
      username,
      password,
      next: "/",
    });
    if (response.status !== 303) throw new Error(`sign-in failed with ${response.status}`);
  }

  async #request(path: string, init: RequestInit) {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await this.#fetch(new URL(path, this.baseUrl).href, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      text: await response.text(),
      location: response.headers.get("location"),
    };
  }
}

export function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match?.[1]) throw new Error(`no hidden field ${name}`);
  return match[1].replace(/&amp;/g, "&");
}

export const DATABASE_PROMPT = "Add a Postgres DATABASE to my app";
