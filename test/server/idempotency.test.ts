/** The reference server's idempotency keys: looked up per account for 24 hours, counted per credential, persisted. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  IDEMPOTENCY_COLLECTION,
  IDEMPOTENCY_KEY_TTL_MS,
  IdempotencyKeys,
} from "../../src/server/idempotency.js";
import { ServiceError } from "../../src/server/service-error.js";
import { Store, type StoreCollection } from "../../src/server/store.js";
import { createV2FetchHandler } from "../../src/server/v2-fetch.js";

const dir = mkdtempSync(join(tmpdir(), "cmb-idempotency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const request = (body: string) => ({ method: "POST", path: "/v2/chats", body });
const created = (n: number) => async () => ({ status: 201, headers: {}, body: { id: `chat_${n}` } });
/** Two members of one team, each with a credential of their own. */
const alice = { account: "acme", credential: "grant_alice" };
const bob = { account: "acme", credential: "grant_bob" };
const studio = { account: "studio", credential: "key_studio" };

describe("A repeated key", () => {
  it("gets the first answer and runs nothing; another body is 409 idempotency_key_reused", async () => {
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION));
    let runs = 0;
    const handle = async () => ({ status: 201, headers: {}, body: { id: `chat_${++runs}` } });
    const first = await keys.run(alice, "k1", request("a"), handle);
    const again = await keys.run(alice, "k1", request("a"), handle);
    expect(again.body).toEqual(first.body);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(runs).toBe(1);
    await expect(keys.run(alice, "k1", request("b"), handle)).rejects.toMatchObject({
      code: "idempotency_key_reused",
    });
    // Keys are per account.
    await keys.run(studio, "k1", request("b"), handle);
    expect(runs).toBe(2);
  });

  it("while the first still runs, waits for it; past the bound, 409 idempotency_key_in_progress with Retry-After", async () => {
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION), { waitMs: 50 });
    let finish: (() => void) | undefined;
    let runs = 0;
    const slow = () =>
      new Promise<{ status: number; headers: Record<string, string>; body: unknown }>((resolve) => {
        runs += 1;
        finish = () => resolve({ status: 201, headers: {}, body: { id: "chat_slow" } });
      });
    const first = keys.run(alice, "slow", request("a"), slow);
    const tooLate = await keys.run(alice, "slow", request("a"), slow).catch((error: unknown) => error);
    expect(tooLate).toBeInstanceOf(ServiceError);
    expect(tooLate).toMatchObject({ code: "idempotency_key_in_progress", extra: { retryAfter: 1 } });
    const waiting = keys.run(alice, "slow", request("a"), slow);
    finish?.();
    expect((await waiting).body).toEqual({ id: "chat_slow" });
    expect((await first).body).toEqual({ id: "chat_slow" });
    expect(runs).toBe(1);
  });

  it("a 5xx is not kept (nothing changed): the repeat runs again", async () => {
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION));
    let runs = 0;
    const failing = async () => {
      runs += 1;
      return { status: 500, headers: {}, body: {} };
    };
    await keys.run(alice, "k5", request("a"), failing);
    await keys.run(alice, "k5", request("a"), failing);
    expect(runs).toBe(2);
  });

  it("refuses a malformed key (400)", async () => {
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION));
    await expect(keys.run(alice, "bad key", request("a"), created(1))).rejects.toMatchObject({
      code: "bad_request",
    });
  });
});

describe("Counted per credential: a member's keys never cost another member", () => {
  it("at a credential's cap its keys younger than the window stay and it waits (429, at most the window)", async () => {
    let now = 1_000_000;
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION), {
      perCredential: 2,
      windowMs: 60 * 60 * 1000,
      now: () => now,
    });
    await keys.run(alice, "a", request("a"), created(1));
    now += 1000;
    await keys.run(alice, "b", request("b"), created(2));
    const refused = await keys.run(alice, "c", request("c"), created(3)).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "rate_limited" });
    const retryAfter = (refused as ServiceError).extra.retryAfter as number;
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60 * 60);
    // The refused credential still answers its live keys; another member of the team is not affected.
    expect((await keys.run(alice, "a", request("a"), created(9))).body).toEqual({ id: "chat_1" });
    expect((await keys.run(bob, "c", request("c"), created(4))).body).toEqual({ id: "chat_4" });
    // Keys are looked up per account: Bob replaying Alice's key and body gets her first answer.
    expect((await keys.run(bob, "a", request("a"), created(10))).body).toEqual({ id: "chat_1" });
    await expect(keys.run(bob, "a", request("other"), created(11))).rejects.toMatchObject({
      code: "idempotency_key_reused",
    });
    // Past the window, the credential's own oldest key makes room; the others' keys stay.
    now += retryAfter * 1000;
    expect((await keys.run(alice, "c2", request("c2"), created(5))).body).toEqual({ id: "chat_5" });
    now += 1000;
    expect((await keys.run(alice, "a", request("a"), created(6))).body).toEqual({ id: "chat_6" });
    expect((await keys.run(bob, "c", request("c"), created(12))).body).toEqual({ id: "chat_4" });
  });

  it("under the cap a key is kept 24 hours, then forgotten", async () => {
    let now = 1_000_000;
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION), { now: () => now });
    await keys.run(alice, "a", request("a"), created(1));
    now += IDEMPOTENCY_KEY_TTL_MS - 1;
    expect((await keys.run(alice, "a", request("a"), created(2))).body).toEqual({ id: "chat_1" });
    now += 1;
    expect((await keys.run(alice, "a", request("a"), created(3))).body).toEqual({ id: "chat_3" });
  });

  it("a 400 (a malformed request that changed nothing) uses no key: 10 050 of them lock nobody out", async () => {
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION), { perCredential: 100 });
    const malformed = async () => ({ status: 400, headers: {}, body: { error: { code: "bad_request" } } });
    for (let i = 0; i < 10_050; i++) await keys.run(alice, `bad-${i}`, request("{"), malformed);
    expect((await keys.run(alice, "good", request("a"), created(1))).body).toEqual({ id: "chat_1" });
    expect((await keys.run(bob, "good-bob", request("a"), created(2))).body).toEqual({ id: "chat_2" });
    // The key of a refused request may be sent again with the corrected body.
    expect((await keys.run(alice, "bad-0", request("a"), created(3))).body).toEqual({ id: "chat_3" });
  });

  it("through /v2: a key first sent with a malformed body is good for the corrected request", async () => {
    const api = createV2FetchHandler({ baseUrl: "http://127.0.0.1:1" });
    const post = (body: string) =>
      api.fetch(
        new Request("http://127.0.0.1:1/v2/chats", {
          method: "POST",
          headers: {
            authorization: `Bearer ${api.apiKeys.personal}`,
            "content-type": "application/json",
            "idempotency-key": "k-fixed",
          },
          body,
        }),
      );
    expect((await post('{"messag": "typo"}')).status).toBe(400);
    const fixed = await post('{"message": "hello"}');
    expect(fixed.status).toBe(201);
    const replayed = await post('{"message": "hello"}');
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await replayed.json()).toEqual(await fixed.json());
  });
});

describe("Constant work per request, whatever other accounts hold", () => {
  /** The collection, counting the records each request reads by walking it. */
  function countingCollection(): { collection: StoreCollection<unknown>; walked: () => number } {
    const inner = new Store().collection<unknown>(IDEMPOTENCY_COLLECTION);
    let walked = 0;
    const collection: StoreCollection<unknown> = {
      ...inner,
      entries: () => {
        const all = inner.entries();
        walked += all.length;
        return all;
      },
      values: () => {
        const all = inner.values();
        walked += all.length;
        return all;
      },
    };
    return { collection, walked: () => walked };
  }

  it("a keyed POST walks no kept key, also with another account at its cap", async () => {
    const { collection, walked } = countingCollection();
    const keys = new IdempotencyKeys(collection, { perCredential: 5_000 });
    for (let i = 0; i < 5_000; i++) await keys.run(studio, `s-${i}`, request(`${i}`), created(i));
    await expect(keys.run(studio, "one-more", request("x"), created(0))).rejects.toMatchObject({
      code: "rate_limited",
    });
    const before = walked();
    for (let i = 0; i < 100; i++)
      await keys.run(studio, `over-${i}`, request("x"), created(0)).catch(() => {});
    await keys.run(alice, "fresh", request("a"), created(1));
    await keys.run(alice, "fresh", request("a"), created(1));
    expect(walked() - before).toBe(0);
  });
});

describe("Persisted with dataFile", () => {
  it("a restarted server still answers a repeated key with the first answer", async () => {
    const dataFile = join(dir, "store.json");
    const first = new Store({ dataFile });
    await new IdempotencyKeys(first.collection(IDEMPOTENCY_COLLECTION)).run(
      alice,
      "p",
      request("a"),
      created(1),
    );
    first.compact();
    const restarted = new IdempotencyKeys(new Store({ dataFile }).collection(IDEMPOTENCY_COLLECTION));
    expect((await restarted.run(alice, "p", request("a"), created(2))).body).toEqual({ id: "chat_1" });
  });
});
