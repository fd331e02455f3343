/** The authorized exchange under a burst of 401s: one recovery for all of them, each request retried once with its token. */
import { describe, expect, it } from "vitest";
import { createBridgeLog } from "../../../../src/bridge/log.js";
import {
  type BridgeAuth,
  createAuthorizedExchange,
} from "../../../../src/bridge/upstream/http/authorized-exchange.js";
import type { HttpAnswer } from "../../../../src/bridge/upstream/http/http-exchange.js";

function answer(status: number): HttpAnswer {
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get: (name) => (name === "www-authenticate" && status === 401 ? 'Bearer error="invalid_token"' : null),
    },
    body: { async *[Symbol.asyncIterator]() {}, cancel: async () => undefined },
    text: async () => "",
    json: async () => ({}),
  };
}

describe("createAuthorizedExchange: concurrent 401s", () => {
  it("200 requests refused with the expired token wait for one recovery and all succeed with the new one", async () => {
    const valid = "t2";
    let stored = "t1";
    let recoveries = 0;
    let tokenReads = 0;
    const auth: BridgeAuth = {
      // The session still believes in the expired token until the recovery saves the new one.
      accessToken: async () => {
        tokenReads += 1;
        return stored;
      },
      recover: async ({ rejectedToken }) => {
        if (rejectedToken !== stored) return stored;
        recoveries += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        stored = valid;
        return stored;
      },
    };
    const sent: string[] = [];
    const exchange = createAuthorizedExchange({
      auth,
      headers: [],
      log: createBridgeLog({ debug: false, silent: true }),
      exchange: async (_url, request) => {
        sent.push(request.headers.authorization ?? "");
        // Answers come back spread over time, some after the recovery has finished.
        await new Promise((resolve) => setTimeout(resolve, sent.length % 7));
        return answer(request.headers.authorization === `Bearer ${valid}` ? 200 : 401);
      },
    });
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () =>
        exchange(new URL("http://127.0.0.1:1/mcp"), { method: "POST", headers: {}, body: "{}" }).then(
          (response) => response.status,
        ),
      ),
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(recoveries).toBe(1);
    // The refused requests join the recovery: none asks the session (its store, its lock) again on its own.
    expect(tokenReads).toBe(1);
    expect(sent.filter((header) => header === "Bearer t2")).toHaveLength(200);
  });
});
