/** chat-cli --timeout: the most one request waits, a reply of the assistant included; the message names the flag. */
import { describe, expect, it } from "vitest";
import { cleanEnv, runInProcess } from "./helpers.js";

/** A service that never answers, but lets go when the request is aborted (ky's timeout aborts it). */
function hungFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
  return new Promise((_, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

describe("--timeout <seconds>", () => {
  const env = cleanEnv({ CHAT_API_URL: "http://chat.test", CHAT_API_KEY: "key-not-secret" });

  it("bounds a send (which would otherwise wait 10 minutes) and says to raise --timeout", async () => {
    const result = await runInProcess(env, { fetch: hungFetch })(["--timeout", "1", "send", "chat_1", "hi"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/did not answer in time/);
    expect(result.stderr).toMatch(/after 1000 ms/);
    expect(result.stderr).toMatch(/--timeout/);
    expect(result.stderr).not.toMatch(/timeoutMs/);
  });

  it("bounds a read too", async () => {
    const result = await runInProcess(env, { fetch: hungFetch })(["--timeout", "1", "get", "chat_1"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/after 1000 ms.*Raise --timeout/s);
  });

  it("refuses a value that is not whole seconds (usage, exit 2)", async () => {
    const result = await runInProcess(env, { fetch: hungFetch })(["--timeout", "soon", "get", "chat_1"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/whole number of seconds/);
  });
});
