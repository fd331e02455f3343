/**
 * Client ID metadata documents: a URL client_id is fetched (bounded, same origin, cached) and checked before it is
 * used; the documents' host and the server are fetch handlers in-process (the connection to the checked address is
 * client-metadata-pinned-address.test.ts's, over a socket).
 */
import type { LookupAddress } from "node:dns";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import {
  ClientMetadataDocuments,
  isNonPublicAddress,
} from "../../../src/server/oauth/client-metadata-documents.js";
import { createInProcessReferenceServer } from "../../../src/testing/index.js";
import { routeOrigin } from "../../support/fetch-routes.js";
import {
  authorizeUrl,
  CALLBACK_URL,
  followToCallback,
  pkcePair,
  postForm,
  startInProcessTestServer,
} from "./helpers.js";

/** The documents' host: answers chosen paths, counts requests per path. */
const documentsUrl = "http://127.0.0.1:8790";
const served = new Map<
  string,
  { status?: number; body?: string; headers?: Record<string, string>; hang?: boolean }
>();
const hits = new Map<string, number>();
/** Requests that reached the documents' host under any name (this machine's own host name too). */
let connections = 0;

async function serveDocument(request: Request): Promise<Response> {
  connections += 1;
  const path = new URL(request.url).pathname;
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const answer = served.get(path);
  if (!answer) return new Response(null, { status: 404 });
  if (answer.hang) {
    // Never answers: the fetch's own signal is all that ends it.
    return new Promise((_resolve, reject) =>
      request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true }),
    );
  }
  return new Response(answer.body ?? "", {
    status: answer.status ?? 200,
    headers: { "content-type": "application/json", ...answer.headers },
  });
}

/** The port the documents' host would listen on, reached by this machine's own name in the forgery test below. */
const documentsPort = new URL(documentsUrl).port;
const unroutes: Array<() => void> = [];
let server: ReferenceServer;
beforeAll(() => {
  unroutes.push(
    routeOrigin(documentsUrl, serveDocument),
    routeOrigin(`https://${hostname()}:${documentsPort}`, serveDocument),
  );
  server = startInProcessTestServer({ autoApprove: "acme", testOnlyAllowHttpClientMetadataDocuments: true });
});
afterAll(async () => {
  await server?.close();
  for (const unroute of unroutes) unroute();
});

/** Publishes a document at `path` naming itself (unless `fields` says otherwise); returns its URL. */
function publish(
  path: string,
  fields: Record<string, unknown> = {},
  headers?: Record<string, string>,
): string {
  const clientId = `${documentsUrl}${path}`;
  served.set(path, {
    body: JSON.stringify({
      client_id: clientId,
      client_name: "Doc client",
      redirect_uris: [CALLBACK_URL],
      ...fields,
    }),
    ...(headers ? { headers } : {}),
  });
  return clientId;
}

async function authorizeReply(clientId: string, redirectUri = CALLBACK_URL) {
  const response = await fetch(
    authorizeUrl(server.url, {
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: pkcePair().challenge,
    }),
    { redirect: "manual" },
  );
  return { status: response.status, location: response.headers.get("location"), text: await response.text() };
}

describe("a valid document", () => {
  it("signs in as a public client: code with iss, then tokens for client_id = the URL", async () => {
    const clientId = publish("/apps/good.json");
    const { verifier, challenge } = pkcePair();
    const callback = await followToCallback(
      authorizeUrl(server.url, {
        client_id: clientId,
        redirect_uri: CALLBACK_URL,
        code_challenge: challenge,
      }),
      CALLBACK_URL,
    );
    expect(callback.searchParams.get("iss")).toBe(server.url);
    const token = await postForm(`${server.url}/token`, {
      grant_type: "authorization_code",
      client_id: clientId,
      code: callback.searchParams.get("code") ?? "",
      code_verifier: verifier,
      redirect_uri: CALLBACK_URL,
    });
    expect(token.status).toBe(200);
    expect(token.body.access_token).toEqual(expect.any(String));
  });

  it("is cached: a second sign-in does not fetch it again", async () => {
    const clientId = publish("/apps/cached.json", {}, { "cache-control": "max-age=600" });
    expect((await authorizeReply(clientId)).status).toBe(302);
    expect((await authorizeReply(clientId)).status).toBe(302);
    expect(hits.get("/apps/cached.json")).toBe(1);
  });

  it("a redirect URI it does not list is refused on a page, without redirecting", async () => {
    const clientId = publish("/apps/listed.json");
    const reply = await authorizeReply(clientId, "http://127.0.0.1:33418/elsewhere");
    expect(reply.status).toBe(400);
    expect(reply.location).toBeNull();
  });
});

describe("documents that are refused (invalid_client, no redirect)", () => {
  it.each([
    [
      "its client_id is not its URL",
      "/apps/other-id.json",
      { client_id: "https://attacker.example/app.json" },
    ],
    ["it lists a javascript: redirect URI", "/apps/js.json", { redirect_uris: ["javascript:alert(1)"] }],
    [
      "it asks for a secret-based auth method",
      "/apps/secret.json",
      { token_endpoint_auth_method: "client_secret_basic" },
    ],
  ])("%s", async (_name, path, fields) => {
    const reply = await authorizeReply(publish(path, fields));
    expect(reply.status).toBe(400);
    expect(reply.location).toBeNull();
    expect(reply.text).toContain("invalid_client");
  });

  it("it is larger than 5 KB", async () => {
    const clientId = publish("/apps/huge.json", { client_name: "x".repeat(10_000) });
    const reply = await authorizeReply(clientId);
    expect(reply.status).toBe(400);
    expect(reply.text).toContain("larger than");
  });

  it("it is not JSON", async () => {
    served.set("/apps/html.json", { body: "<html>hello</html>" });
    const reply = await authorizeReply(`${documentsUrl}/apps/html.json`);
    expect(reply.status).toBe(400);
    expect(reply.text).toContain("not JSON");
  });

  it("it redirects to another host", async () => {
    served.set("/apps/moved.json", { status: 302, headers: { location: "http://localhost:1/app.json" } });
    const reply = await authorizeReply(`${documentsUrl}/apps/moved.json`);
    expect(reply.status).toBe(400);
    expect(reply.text).toContain("redirects elsewhere");
  });
});

describe("a document that never arrives", () => {
  it("is given up on after the fetch time limit: an unknown client (invalid_client, no redirect)", async () => {
    served.set("/apps/slow.json", { hang: true });
    // The server's limit shortened; a refused document is answered 400 without a redirect (the cases above).
    const resolver = new ClientMetadataDocuments({
      now: Date.now,
      allowLoopbackHttp: true,
      fetchTimeoutMs: 200,
    });
    const outcome = await resolver.resolve(`${documentsUrl}/apps/slow.json`);
    expect(outcome).toEqual({ ok: false, reason: "the client metadata document timed out" });
    expect(hits.get("/apps/slow.json")).toBe(1);
  });
});

describe("https documents on local or private addresses (server-side request forgery)", () => {
  it.each([
    "https://127.0.0.1/app.json",
    "https://localhost/app.json",
    "https://10.1.2.3/app.json",
    "https://192.168.1.1/app.json",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/app.json",
    "https://[fd00::1]/app.json",
  ])("%s is never fetched: an unknown client", async (clientId) => {
    // A server without the test-only loopback switch, as every real deployment runs.
    const strict = startInProcessTestServer({ autoApprove: "acme", url: "http://127.0.0.1:8788" });
    let reply: { status: number; text: string };
    try {
      const response = await fetch(
        authorizeUrl(strict.url, {
          client_id: clientId,
          redirect_uri: CALLBACK_URL,
          code_challenge: pkcePair().challenge,
        }),
        { redirect: "manual" },
      );
      reply = { status: response.status, text: await response.text() };
    } finally {
      await strict.close();
    }
    expect(reply.status).toBe(400);
    expect(reply.text).toContain("invalid_client");
    expect(reply.text).toContain("unknown client_id");
  });
});

describe("plain http documents", () => {
  it("are refused unless the test-only option allows loopback ones", async () => {
    const strict = startInProcessTestServer({ autoApprove: "acme", url: "http://127.0.0.1:8788" });
    try {
      const clientId = publish("/apps/strict.json");
      const response = await fetch(
        authorizeUrl(strict.url, {
          client_id: clientId,
          redirect_uri: CALLBACK_URL,
          code_challenge: pkcePair().challenge,
        }),
        { redirect: "manual" },
      );
      expect(response.status).toBe(400);
      expect(await response.text()).toContain("invalid_client");
      expect(hits.get("/apps/strict.json")).toBeUndefined();
    } finally {
      await strict.close();
    }
  });
});

/** The whole server without a port (its fetch handler), with or without the test-only loopback switch. */
function inProcess(testOnlyAllowHttpClientMetadataDocuments: boolean) {
  return createInProcessReferenceServer({
    autoApprove: "acme",
    rateLimit: false,
    oauthRateLimit: false,
    testOnlyAllowHttpClientMetadataDocuments,
  });
}

async function authorizeInProcess(
  target: ReturnType<typeof inProcess>,
  clientId: string,
): Promise<{ status: number; location: string | null; text: string }> {
  const response = await target.fetch(
    authorizeUrl(target.url, {
      client_id: clientId,
      redirect_uri: CALLBACK_URL,
      code_challenge: pkcePair().challenge,
    }),
    { redirect: "manual" },
  );
  return { status: response.status, location: response.headers.get("location"), text: await response.text() };
}

describe("host names that resolve to this machine (server-side request forgery)", () => {
  it.each([
    ["without", false],
    ["with", true],
  ])("the machine's own host name is never connected to, %s the test-only switch", async (_name, allow) => {
    const target = inProcess(allow);
    try {
      const before = connections;
      const reply = await authorizeInProcess(target, `https://${hostname()}:${documentsPort}/apps/self.json`);
      expect(reply.status).toBe(400);
      expect(reply.location).toBeNull();
      expect(reply.text).toContain("invalid_client");
      expect(connections - before).toBe(0);
    } finally {
      await target.close();
    }
  });
});

describe("redirects", () => {
  it("are not followed, not even to the same origin", async () => {
    const target = inProcess(true);
    try {
      const landing = publish("/apps/landing.json");
      served.set("/apps/hop.json", { status: 302, headers: { location: landing } });
      const reply = await authorizeInProcess(target, `${documentsUrl}/apps/hop.json`);
      expect(reply.status).toBe(400);
      expect(reply.text).toContain("redirects");
      expect(hits.get("/apps/landing.json")).toBeUndefined();
    } finally {
      await target.close();
    }
  });
});

describe("the host is resolved once, every address checked, and the checked one connected to", () => {
  /** A lookup that answers `answers` for every name and counts its calls. */
  function stubLookup(answers: LookupAddress[] | Error) {
    const calls: string[] = [];
    const lookup = async (host: string): Promise<LookupAddress[]> => {
      calls.push(host);
      if (answers instanceof Error) throw answers;
      return answers;
    };
    return { lookup, calls };
  }

  it.each([
    ["a loopback address", [{ address: "127.0.0.1", family: 4 }]],
    [
      "a private address among public ones",
      [
        { address: "93.184.215.14", family: 4 },
        { address: "10.0.0.7", family: 4 },
      ],
    ],
    ["an IPv4-mapped IPv6 loopback", [{ address: "::ffff:127.0.0.1", family: 6 }]],
    ["a unique-local IPv6 address", [{ address: "fd12:3456::1", family: 6 }]],
    ["a CGNAT address", [{ address: "100.64.1.1", family: 4 }]],
    ["the metadata service's link-local address", [{ address: "169.254.169.254", family: 4 }]],
  ])("a name that resolves to %s is refused without a connection", async (_name, answers) => {
    const { lookup, calls } = stubLookup(answers);
    const resolver = new ClientMetadataDocuments({ now: Date.now, lookup });
    const outcome = await resolver.resolve("https://cimd.example/app.json");
    expect(outcome).toEqual({ ok: false, reason: expect.stringMatching(/local or private address/) });
    expect(calls).toEqual(["cimd.example"]);
  });

  it("with the test-only switch, a name that is not a loopback name still may not resolve to loopback", async () => {
    const { lookup } = stubLookup([{ address: "127.0.0.1", family: 4 }]);
    const resolver = new ClientMetadataDocuments({ now: Date.now, allowLoopbackHttp: true, lookup });
    const outcome = await resolver.resolve("https://cimd.example/app.json");
    expect(outcome).toEqual({ ok: false, reason: expect.stringMatching(/local or private address/) });
  });

  it("a name that does not resolve is refused", async () => {
    const { lookup } = stubLookup(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" }));
    const resolver = new ClientMetadataDocuments({ now: Date.now, lookup });
    const outcome = await resolver.resolve("https://cimd.example/app.json");
    expect(outcome).toEqual({ ok: false, reason: expect.stringMatching(/could not be resolved/) });
  });
});

describe("isNonPublicAddress: the addresses a document is never fetched from", () => {
  it.each([
    "0.0.0.0",
    "0.1.2.3",
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "100.127.255.255",
    "192.0.0.8",
    "192.0.2.1",
    "198.18.0.1",
    "198.51.100.1",
    "203.0.113.1",
    "224.0.0.251",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::7f00:1",
    "64:ff9b:1::a00:1",
    "100::1",
    "2001:db8::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fec0::1",
    "ff02::1",
    "not an address",
  ])("%s is refused", (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",
    "100.128.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "192.167.255.255",
    "::ffff:8.8.8.8",
    "2606:4700:4700::1111",
    "2a00:1450:4001::200e",
  ])("%s is public", (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});
