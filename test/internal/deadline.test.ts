/** withinDeadline (src/internal/deadline.ts): a promise bounded in time, rejecting with a message or an error of the caller's. */
import { describe, expect, it } from "vitest";
import { withinDeadline } from "../../src/internal/deadline.js";

class LateError extends Error {
  override readonly name = "LateError";
}

describe("a promise that settles in time", () => {
  it("resolves with its value", async () => {
    await expect(withinDeadline(Promise.resolve(7), 1_000, "late")).resolves.toBe(7);
  });

  it("rejects with its own error", async () => {
    await expect(withinDeadline(Promise.reject(new Error("own")), 1_000, "late")).rejects.toThrow("own");
  });
});

describe("a promise that does not settle in time", () => {
  it("rejects with an Error carrying the message", async () => {
    const error = await withinDeadline(new Promise(() => {}), 10, "no answer").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe("no answer");
  });

  it("rejects with the caller's error when given a factory", async () => {
    const error = await withinDeadline(new Promise(() => {}), 10, () => new LateError("too slow")).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LateError);
    expect((error as Error).message).toBe("too slow");
  });
});
