/** accountRecordingFetch: the `account` extra parameter of a token response, read beside the SDK's own parsing. */
import { describe, expect, it } from "vitest";
import { accountRecordingFetch } from "../../src/auth/session/token-endpoint.js";

const answering = (status: number, body: string) =>
  (async () => new Response(body, { status })) as typeof fetch;

describe("accountRecordingFetch", () => {
  it("remembers the account slug of a successful token response and leaves the body for the SDK", async () => {
    const body = JSON.stringify({ access_token: "a", token_type: "Bearer", account: "acme" });
    const recorder = accountRecordingFetch(answering(200, body));
    expect(recorder.account()).toBeUndefined();
    const response = await recorder.fetchFn("http://127.0.0.1/token", { method: "POST" });
    expect(await response.text()).toBe(body);
    expect(recorder.account()).toBe("acme");
  });

  it("ignores an error answer, a missing or non-slug account, and a body that is not JSON", async () => {
    for (const [status, body] of [
      [400, JSON.stringify({ error: "invalid_grant", account: "acme" })],
      [200, JSON.stringify({ access_token: "a" })],
      [200, JSON.stringify({ access_token: "a", account: "\u001b[31mred" })],
      [200, JSON.stringify({ access_token: "a", account: 7 })],
      [200, "not json"],
    ] as const) {
      const recorder = accountRecordingFetch(answering(status, body));
      await recorder.fetchFn("http://127.0.0.1/token");
      expect(recorder.account(), body).toBeUndefined();
    }
  });

  it("does not read an oversized body past its bound", async () => {
    const body = JSON.stringify({ account: "acme", padding: "x".repeat(100_000) });
    const recorder = accountRecordingFetch(answering(200, body));
    const response = await recorder.fetchFn("http://127.0.0.1/token");
    expect(recorder.account()).toBeUndefined();
    expect((await response.text()).length).toBe(body.length);
  });
});
