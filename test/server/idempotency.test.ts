/** The reference server's idempotency keys: 24 hours per account, bounded, refusing rather than forgetting, persisted. */
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
import { Store } from "../../src/server/store.js";

const dir = mkdtempSync(join(tmpdir(), "cmb-idempotency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const request = (body: string) => ({ method: "POST", path: "/v2/chats", body });
const created = (n: number) => async () => ({ status: 201, headers: {}, body: { id: `chat_${n}` } });

describe("A repeated key", () => {
  it("gets the first answer and runs nothing; another body is 409 idempotency_key_reused", async () => {
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION));
    let runs = 0;
    const handle = async () => ({ status: 201, headers: {}, body: { id: `chat_${++runs}` } });
    const first = await keys.run("acme", "k1", request("a"), handle);
    const again = await keys.run("acme", "k1", request("a"), handle);
    expect(again.body).toEqual(first.body);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(runs).toBe(1);
    await expect(keys.run("acme", "k1", request("b"), handle)).rejects.toMatchObject({
      code: "idempotency_key_reused",
    });
    // Keys are per account.
    await keys.run("studio", "k1", request("b"), handle);
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
    const first = keys.run("acme", "slow", request("a"), slow);
    const tooLate = await keys.run("acme", "slow", request("a"), slow).catch((error: unknown) => error);
    expect(tooLate).toBeInstanceOf(ServiceError);
    expect(tooLate).toMatchObject({ code: "idempotency_key_in_progress", extra: { retryAfter: 1 } });
    const waiting = keys.run("acme", "slow", request("a"), slow);
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
    await keys.run("acme", "k5", request("a"), failing);
    await keys.run("acme", "k5", request("a"), failing);
    expect(runs).toBe(2);
  });

  it("refuses a malformed key (400)", async () => {
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION));
    await expect(keys.run("acme", "bad key", request("a"), created(1))).rejects.toMatchObject({
      code: "bad_request",
    });
  });
});

describe("Bounded, and never forgetting a live key", () => {
  it("at the per-account cap, expired keys make room; with every key live, new keys are refused (429)", async () => {
    let now = 1_000_000;
    const keys = new IdempotencyKeys(new Store().collection(IDEMPOTENCY_COLLECTION), {
      perAccount: 2,
      now: () => now,
    });
    await keys.run("acme", "a", request("a"), created(1));
    await keys.run("acme", "b", request("b"), created(2));
    await expect(keys.run("acme", "c", request("c"), created(3))).rejects.toMatchObject({
      code: "rate_limited",
    });
    // The refused key's account still answers its live keys; another account is not affected.
    expect((await keys.run("acme", "a", request("a"), created(9))).body).toEqual({ id: "chat_1" });
    await keys.run("studio", "c", request("c"), created(4));
    now += IDEMPOTENCY_KEY_TTL_MS;
    expect((await keys.run("acme", "c", request("c"), created(5))).body).toEqual({ id: "chat_5" });
    // After 24 hours a key is forgotten: the same key runs again.
    expect((await keys.run("acme", "a", request("a"), created(6))).body).toEqual({ id: "chat_6" });
  });
});

describe("Persisted with dataFile", () => {
  it("a restarted server still answers a repeated key with the first answer", async () => {
    const dataFile = join(dir, "store.json");
    const first = new Store({ dataFile });
    await new IdempotencyKeys(first.collection(IDEMPOTENCY_COLLECTION)).run(
      "acme",
      "p",
      request("a"),
      created(1),
    );
    first.compact();
    const restarted = new IdempotencyKeys(new Store({ dataFile }).collection(IDEMPOTENCY_COLLECTION));
    expect((await restarted.run("acme", "p", request("a"), created(2))).body).toEqual({ id: "chat_1" });
  });
});
