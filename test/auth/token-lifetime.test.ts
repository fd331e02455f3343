/** Token lifetimes (src/auth/token-lifetime.ts): `expires_in` counted from the token request, due ahead of expiry. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { isDue, isExpired, toStoredTokens } from "../../src/auth/token-lifetime.js";

afterEach(() => vi.useRealTimers());

describe("a token answer that arrives late", () => {
  it("counts expires_in from when the request was sent, not from when the answer came", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const requestedAt = Date.now();
    // The authorization server issued a 5 s token, and its answer took 3.5 s to arrive.
    vi.setSystemTime(requestedAt + 3500);
    const tokens = toStoredTokens(
      { access_token: "at", token_type: "Bearer", expires_in: 5 },
      {},
      requestedAt,
    );
    expect(tokens.issuedAt).toBe(requestedAt);
    expect(tokens.expiresAt).toBe(requestedAt + 5000);
    // Due a fifth of its life before expiry (4 s after issue), so the next request refreshes at once.
    vi.setSystemTime(requestedAt + 4000);
    expect(isDue(tokens)).toBe(true);
    expect(isExpired(tokens)).toBe(false);
  });

  it("without a request time, the lifetime starts now", () => {
    vi.useFakeTimers({ now: 2_000_000 });
    const tokens = toStoredTokens({ access_token: "at", token_type: "Bearer", expires_in: 60 });
    expect(tokens.expiresAt).toBe(2_000_000 + 60_000);
    expect(isDue(tokens)).toBe(false);
  });
});
