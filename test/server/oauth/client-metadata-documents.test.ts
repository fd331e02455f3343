/** Client ID metadata documents: a URL client_id is fetched (bounded, same origin, cached) and checked before it is used. */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import {
  authorizeUrl,
  CALLBACK_URL,
  followToCallback,
  pkcePair,
  postForm,
  startTestServer,
} from "./helpers.js";

/** Serves documents at chosen paths; counts requests per path. */
let documents: Server;
let documentsUrl = "";
const served = new Map<
  string,
  { status?: number; body?: string; headers?: Record<string, string>; hang?: boolean }
>();
const hits = new Map<string, number>();

let server: ReferenceServer;
beforeAll(async () => {
  documents = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const answer = served.get(path);
    if (!answer) {
      res.writeHead(404).end();
      return;
    }
    if (answer.hang) return;
    res.writeHead(answer.status ?? 200, { "content-type": "application/json", ...answer.headers });
    res.end(answer.body ?? "");
  });
  await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
  const address = documents.address();
  documentsUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  server = await startTestServer({ autoApprove: "acme", testOnlyAllowHttpClientMetadataDocuments: true });
});
afterAll(async () => {
  await server?.close();
  documents.closeAllConnections();
  await new Promise((resolve) => documents.close(resolve));
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
  it("is given up on after the fetch time limit: invalid_client, no redirect", async () => {
    served.set("/apps/slow.json", { hang: true });
    const reply = await authorizeReply(`${documentsUrl}/apps/slow.json`);
    expect(reply.status).toBe(400);
    expect(reply.location).toBeNull();
    expect(reply.text).toContain("timed out");
  }, 15_000);
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
    const strict = await startTestServer({ autoApprove: "acme" });
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
    const strict = await startTestServer({ autoApprove: "acme" });
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
