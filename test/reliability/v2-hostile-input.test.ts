/**
 * Hostile input on every /v2 route (fast-check), on the reference server's handler in-process with each target as
 * sent: every reply is a well-formed error or a valid success, never 5xx or a hang, and the store loses nothing.
 * Bytes that are not HTTP, and slow connections, are node:http's to answer: v2-hostile-http.test.ts.
 */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../support/reference-request.js";
import { inProcessRequest } from "./fixtures/in-process-http.js";
import type { RawRequest } from "./fixtures/raw-http.js";
import {
  type ChatSnapshot,
  problemWithReply,
  snapshotAccount,
  V2_ROUTE_NAMES,
  V2_ROUTES,
  type V2RouteName,
} from "./fixtures/wire-checks.js";

// Accounts the barrage acts as; `studio` is never given a credential, so its chats must come out byte-identical.
const ACTORS = ["acme", "personal"] as const;
const SENTINEL = "studio";
const RUNS = Number(process.env.RELIABILITY_RUNS ?? 300);

let server: RequestableReferenceServer;
const before = new Map<string, Map<string, ChatSnapshot>>();
const created = new Map<string, number>(ACTORS.map((slug) => [slug, 0]));
const realChatIds: string[] = [];
const realMessageIds: string[] = [];
const acmeChatIds: string[] = [];
const acmeMessageIds: string[] = [];
const seenStatuses = new Map<number, number>();

beforeAll(async () => {
  server = createRequestableReferenceServer({ rateLimit: false });
  for (const slug of [...ACTORS, SENTINEL]) {
    for (const message of ["Hello there", "Add a DATABASE to my app", "Plan a launch"]) {
      const chat = await post(slug, "/v2/chats", { message });
      realChatIds.push(chat.id);
      if (slug === "acme") acmeChatIds.push(chat.id);
      const messages = await (
        await server.request(`/v2/chats/${chat.id}/messages`, { headers: bearer(slug) })
      ).json();
      const ids = messages.data.map((m: { id: string }) => m.id);
      realMessageIds.push(...ids);
      if (slug === "acme") acmeMessageIds.push(...ids);
    }
  }
  for (const slug of [...ACTORS, SENTINEL]) before.set(slug, await snapshotAccount(server, slug));
});

afterAll(async () => {
  await server?.close();
});

function bearer(slug: string): Record<string, string> {
  return { authorization: `Bearer ${server.apiKeys[slug]}` };
}

async function post(slug: string, path: string, body: unknown) {
  const response = await server.request(path, {
    method: "POST",
    headers: { ...bearer(slug), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return response.json();
}

/** Ids a path segment can carry: real ones (own and other teams'), traversal, encodings, control characters, unicode, very long. */
function idArbitrary(): fc.Arbitrary<string> {
  const traversal = fc.constantFrom(
    "..",
    ".",
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "..%2f",
    "%2e%2e%2f%2e%2e%2f",
    "....%2F%2F",
    "..%5C..%5Cwindows",
    "%2F",
    "%00",
    "chat_x%00.json",
    "%",
    "%zz",
    "%C0%AF",
    "%ff%fe",
    "chat_%0d%0aSet-Cookie:%20x=1",
    "__proto__",
    "constructor",
    "hasOwnProperty",
    "%E2%80%AE",
    "%F0%9F%92%A9",
  );
  const encoded = (value: fc.Arbitrary<string>) => value.map((text) => encodeURIComponent(text));
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...realChatIds, ...realMessageIds) },
    { weight: 3, arbitrary: traversal },
    { weight: 2, arbitrary: encoded(fc.string({ unit: "binary", minLength: 1, maxLength: 40 })) },
    { weight: 1, arbitrary: encoded(fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 })) },
    { weight: 1, arbitrary: encoded(fc.string({ minLength: 1, maxLength: 8 })).map((s) => `${s}\u0001`) },
    { weight: 1, arbitrary: fc.integer({ min: 129, max: 6_000 }).map((n) => "a".repeat(n)) },
  );
}

/** Query strings aimed at limit, cursor and topic, plus unknown and repeated keys and broken escapes. */
function queryArbitrary(): fc.Arbitrary<string> {
  const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const value = fc.oneof(
    fc.constantFrom(
      "0",
      "-1",
      "1",
      "100",
      "101",
      "1e2",
      "1.5",
      "NaN",
      "Infinity",
      "0x10",
      " 5",
      "",
      "99999999999999999999999",
      "%",
      "%zz",
      "%00",
      "[object Object]",
    ),
    fc.constantFrom(
      cursorOf({ k: "chats", p: -1 }),
      cursorOf({ k: "messages", p: 1e308 }),
      cursorOf({ k: "chats", p: "1" }),
      cursorOf({ k: "messages", p: 0.5 }),
      cursorOf({ __proto__: { k: "chats" }, p: 1 }),
      cursorOf([1, 2]),
      cursorOf(null),
      "bm90IGpzb24",
    ),
    fc.string({ unit: "binary", maxLength: 30 }).map(encodeURIComponent),
    fc.integer({ min: 190, max: 600 }).map((n) => "t".repeat(n)),
  );
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("limit", "cursor", "topic") },
    { weight: 1, arbitrary: fc.constantFrom("limit[]", "__proto__", "", "LIMIT", "%6cimit") },
    { weight: 1, arbitrary: fc.string({ maxLength: 6 }).map(encodeURIComponent) },
  );
  return fc
    .array(fc.tuple(key, value), { maxLength: 5 })
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}` : ""));
}

/** Authorization variants: own and other teams' keys, wrong schemes, spacing, junk, huge, duplicates. */
function authArbitrary(): fc.Arbitrary<Array<[string, string]>> {
  const acme = server.apiKeys.acme ?? "";
  const personal = server.apiKeys.personal ?? "";
  const single = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(`Bearer ${acme}`, `Bearer ${personal}`) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        "Bearer",
        "Bearer ",
        `bearer ${acme}`,
        `BEARER    ${acme}   `,
        `Bearer ${acme} extra`,
        `Bearer ${acme}x`,
        `Bearer ${acme.slice(0, -1)}`,
        `Bearer ${acme},Bearer ${personal}`,
        acme,
        `Basic ${Buffer.from(`x:${acme}`).toString("base64")}`,
        "Bearer chat_sk_",
        "Bearer chat_sk_\u00e9\u00e9",
        `Bearer ${"A".repeat(8_000)}`,
        `Bearer ${server.apiKeys[SENTINEL]}`.replace(/.$/, "?"),
        "Bearer null",
        "Bearer undefined",
      ),
    },
    { weight: 2, arbitrary: fc.string({ maxLength: 60 }).map((s) => `Bearer ${s.replace(/[\r\n]/g, "")}`) },
  );
  return fc.oneof(
    { weight: 8, arbitrary: single.map((value): Array<[string, string]> => [["Authorization", value]]) },
    { weight: 1, arbitrary: fc.constant<Array<[string, string]>>([]) },
    {
      weight: 1,
      arbitrary: fc.tuple(single, single).map(
        ([a, b]): Array<[string, string]> => [
          ["Authorization", a],
          ["Authorization", b],
        ],
      ),
    },
  );
}

/** Bodies: valid-shaped, random JSON, prototype pollution, truncated, deeply nested, invalid UTF-8, empty. */
function bodyArbitrary(): fc.Arbitrary<Buffer | undefined> {
  const permission = {
    type: "ALLOW_DYNAMIC_TOOL_STRICT",
    toolName: "SystemAction",
    input: { systemAction: "executeScript", executeScript: "/scripts/setup-db.sql" },
  };
  const shaped = fc.oneof(
    fc.record({ message: fc.string({ maxLength: 50 }) }),
    fc.record({ message: fc.string({ maxLength: 20 }), title: fc.string({ maxLength: 20 }) }),
    fc.record({ message: fc.oneof(fc.integer(), fc.constant(null), fc.array(fc.string())) }),
    fc.record({
      task: fc.oneof(
        fc.record({
          type: fc.constant("confirmed-steps"),
          connectedIntegrationNames: fc.array(fc.constantFrom("Neon", "neon", "Stripe", "")),
        }),
        fc.record({
          type: fc.constant("confirmed-permissions"),
          permissions: fc.array(fc.constant(permission), { maxLength: 2 }),
        }),
        fc.record({ type: fc.string({ maxLength: 10 }) }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    }),
  );
  const text = fc.oneof(
    { weight: 4, arbitrary: shaped.map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{"__proto__":{"polluted":true},"message":"hi"}',
        '{"constructor":{"prototype":{"polluted":true}},"message":"hi"}',
        '{"message":"hi","message":"again"}',
        '{"task":{"type":"confirmed-steps","connectedIntegrationNames":["Neon"],"__proto__":{"x":1}}}',
        `${"[".repeat(5_000)}${"]".repeat(5_000)}`,
        `{"message":${'{"a":'.repeat(3_000)}1${"}".repeat(3_000)}}`,
        `{"message":"${"\\ud800".repeat(10)}"}`,
        "",
        "   ",
        "null",
        "true",
        "0",
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(shaped, fc.nat()).map(([value, cut]) => {
        const full = JSON.stringify(value);
        return full.slice(0, cut % Math.max(1, full.length));
      }),
    },
  );
  return fc.oneof(
    { weight: 8, arbitrary: text.map((value) => Buffer.from(value)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const contentTypeArbitrary = fc.constantFrom(
  undefined,
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/json; charset=bogus",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  ";;;",
  "*/*",
);

const contentEncodingArbitrary = fc.constantFrom(
  ...Array.from({ length: 12 }, () => undefined),
  "gzip",
  "deflate",
  "br",
  "bogus",
);

interface HostileCase {
  route: V2RouteName;
  method: string;
  chatId: string;
  messageId: string;
  query: string;
  auth: Array<[string, string]>;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  body: Buffer | undefined;
}

/** Mostly-valid requests (acme acting on its own chats) with each part independently replaced by a hostile one. */
function hostileCaseArbitrary(): fc.Arbitrary<HostileCase> {
  const own = (valid: fc.Arbitrary<string>, hostile: fc.Arbitrary<string>) =>
    fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: hostile });
  const validQuery = fc.constantFrom(
    "",
    "?limit=1",
    "?limit=100",
    "?topic=database",
    "?topic=DATABASE&limit=2",
  );
  return fc.constantFrom(...V2_ROUTE_NAMES).chain((route) =>
    fc
      .record({
        otherMethod: fc.oneof(
          { weight: 7, arbitrary: fc.constant(null) },
          {
            weight: 1,
            arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
          },
        ),
        chatId: own(fc.constantFrom(...acmeChatIds), idArbitrary()),
        messageId: own(fc.constantFrom(...acmeMessageIds), idArbitrary()),
        query: own(validQuery, queryArbitrary()),
        auth: fc.oneof(
          {
            weight: 3,
            arbitrary: fc.constant<Array<[string, string]>>([
              ["Authorization", `Bearer ${server.apiKeys.acme}`],
            ]),
          },
          { weight: 2, arbitrary: authArbitrary() },
        ),
        contentType: fc.oneof(
          { weight: 3, arbitrary: fc.constant("application/json") },
          { weight: 1, arbitrary: contentTypeArbitrary },
        ),
        contentEncoding: contentEncodingArbitrary,
        body: fc.oneof(
          { weight: 3, arbitrary: fc.constant(validBodyOf(route)) },
          { weight: 2, arbitrary: bodyArbitrary() },
        ),
      })
      .map(({ otherMethod, ...rest }) => ({
        ...rest,
        route,
        method: otherMethod ?? V2_ROUTES[route].method,
      })),
  );
}

function validBodyOf(route: V2RouteName): Buffer | undefined {
  if (route === "createChat") return Buffer.from(JSON.stringify({ message: "Set up a database please" }));
  if (route === "sendMessage") return Buffer.from(JSON.stringify({ message: "And another thing" }));
  if (route === "resolveTask") {
    return Buffer.from(
      JSON.stringify({ task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] } }),
    );
  }
  return undefined;
}

function toRawRequest(c: HostileCase): RawRequest {
  const path = V2_ROUTES[c.route].path.replace("{chatId}", c.chatId).replace("{messageId}", c.messageId);
  const headers: Array<[string, string]> = [...c.auth];
  if (c.contentType) headers.push(["Content-Type", c.contentType]);
  let body = c.body;
  if (c.contentEncoding) {
    headers.push(["Content-Encoding", c.contentEncoding]);
    // Half the time a real gzip stream, so the inflate path sees valid and invalid input alike.
    if (c.contentEncoding === "gzip" && body && body.length % 2 === 0) body = gzipSync(body);
  }
  return { method: c.method, target: `${path}${c.query}`, headers, ...(body ? { body } : {}) };
}

function countCreated(c: HostileCase, status: number): void {
  if (status !== 201) return;
  const token = /^Bearer +(\S+)/i.exec(c.auth[0]?.[1] ?? "")?.[1];
  const slug = ACTORS.find((candidate) => server.apiKeys[candidate] === token);
  if (slug) created.set(slug, (created.get(slug) ?? 0) + 1);
}

/**
 * Cases every run starts with, whatever the seed: one of each answer the barrage must produce (200, 201, 400 for an
 * unfolded `..` id, 401, 404, and 409 for resolving a chat that is not paused). Random cases reach each of them too,
 * but 409 only a few times in 300, so a seed (or a run cut short) could miss it.
 */
function anchorCases(): HostileCase[] {
  const base: HostileCase = {
    route: "getChat",
    method: "GET",
    chatId: acmeChatIds[0] ?? "",
    messageId: acmeMessageIds[0] ?? "",
    query: "",
    auth: [["Authorization", `Bearer ${server.apiKeys.acme}`]],
    contentType: "application/json",
    contentEncoding: undefined,
    body: undefined,
  };
  return [
    base,
    { ...base, route: "createChat", method: "POST", body: validBodyOf("createChat") },
    { ...base, chatId: ".." },
    { ...base, auth: [] },
    { ...base, chatId: "chat_doesnotexist" },
    // acme's first chat ("Hello there") was answered without a pause: nothing to resolve.
    { ...base, route: "resolveTask", method: "POST", body: validBodyOf("resolveTask") },
  ];
}

describe("Random requests on every /v2 route: a well-formed error or a valid success, never 5xx, never a hang", () => {
  it("answers every generated request well", async () => {
    const anchors = anchorCases();
    await fc.assert(
      fc.asyncProperty(hostileCaseArbitrary(), async (c) => {
        const request = toRawRequest(c);
        const reply = await inProcessRequest(server, request);
        // A different method on the same path is another route (GET on send's path lists messages).
        const path = V2_ROUTES[c.route].path;
        const actual = V2_ROUTE_NAMES.map((name) => V2_ROUTES[name]).find(
          (route) => route.path === path && route.method === c.method,
        );
        const problem = problemWithReply(reply, actual, c.method);
        countCreated(c, reply.status);
        seenStatuses.set(reply.status, (seenStatuses.get(reply.status) ?? 0) + 1);
        if (problem) throw new Error(`${c.method} ${request.target.slice(0, 200)}: ${problem}`);
      }),
      // A fixed number of runs, not a time limit: how much is tried must not depend on how busy the machine is.
      // The anchors count as runs: RUNS random cases follow them.
      { numRuns: anchors.length + RUNS, examples: anchors.map((c): [HostileCase] => [c]) },
    );
    // The barrage reaches the handlers, not only the front door: successes and each kind of refusal occur.
    for (const status of [200, 201, 400, 401, 404, 409])
      expect(seenStatuses.get(status) ?? 0).toBeGreaterThan(0);
  }, 90_000);
});

describe("Path traversal, control characters and unicode in ids: 400 bad_request or 404 not_found", () => {
  const hostileIds = [
    "..",
    "..%2F..%2Fstate.json",
    "%2e%2e%2f%2e%2e%2fpackage.json",
    "..%5C..%5C",
    "%00",
    "chat_%0d%0a",
    "%E2%80%AE",
    "%F0%9F%92%A9",
    "caf%C3%A9",
    "%",
    "a".repeat(129),
    "a".repeat(10_000),
  ];
  for (const id of hostileIds) {
    it(`chatId ${id.length > 40 ? `${id.slice(0, 10)}... (${id.length} chars)` : id}`, async () => {
      for (const route of ["getChat", "listMessages", "getPreview", "sendMessage"] as const) {
        const spec = V2_ROUTES[route];
        const reply = await inProcessRequest(server, {
          method: spec.method,
          target: spec.path.replace("{chatId}", id),
          headers: [
            ["Authorization", `Bearer ${server.apiKeys.acme}`],
            ["Content-Type", "application/json"],
          ],
          ...(spec.method === "POST" ? { body: '{"message":"hi"}' } : {}),
        });
        expect(problemWithReply(reply, undefined, spec.method)).toBeNull();
        expect([400, 404]).toContain(reply.status);
      }
    });
  }
});

describe("The store loses nothing under the barrage", () => {
  it("every chat and message from before is intact; each acknowledged create is present", async () => {
    for (const slug of ACTORS) {
      const now = await snapshotAccount(server, slug);
      const then = before.get(slug) ?? new Map();
      expect(now.size).toBe(then.size + (created.get(slug) ?? 0));
      for (const [chatId, old] of then) {
        const current = now.get(chatId);
        expect(current, `chat ${chatId} of ${slug}`).toBeDefined();
        // The barrage may append to these chats with valid requests; what was there must still be there, unchanged.
        expect(current?.messages.slice(0, old.messages.length)).toEqual(old.messages);
      }
    }
    expect(await snapshotAccount(server, SENTINEL)).toEqual(before.get(SENTINEL));
  });

  it("no prototype pollution reached the server's objects", () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
