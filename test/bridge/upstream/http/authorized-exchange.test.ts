/** The authorized exchange under a burst of 401s: one recovery for all of them, each request retried once with its token. */
import { describe, expect, it } from "vitest";
import { createBridgeLog } from "../../../../src/bridge/log/log.js";
import {
  type BridgeAuth,
  createAuthorizedExchange,
} from "../../../../src/bridge/upstream/http/authorized-exchange.js";
import type { HttpAnswer } from "../../../../src/bridge/upstream/http/http-exchange.js";

/** Lets the event loop turn `count` times: answers and recoveries interleave in a set order, with no clock. */
async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}

function answer(status: number): HttpAnswer {
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get: (name) => (name === "www-authenticate" && status === 401 ? 'Bearer error="invalid_token"' : null),
    },
    body: { async *[Symbol.asyncIterator]() {}, cancel: async () => undefined },
    text: async () => "",
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
        await turns(20);
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
        await turns(sent.length % 7);
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

describe("createAuthorizedExchange: a recovered token refused too (a slow refresh, a busy machine)", () => {
  /** A session whose tokens t1, t2, ... each outlive only `good` requests, and an exchange that counts them. */
  function rotatingTokens(refuse: (token: string) => boolean) {
    let generation = 1;
    let recoveries = 0;
    const auth: BridgeAuth = {
      accessToken: async () => `t${generation}`,
      recover: async ({ rejectedToken }) => {
        if (rejectedToken !== `t${generation}`) return `t${generation}`;
        recoveries += 1;
        generation += 1;
        return `t${generation}`;
      },
    };
    const sent: string[] = [];
    const exchange = createAuthorizedExchange({
      auth,
      headers: [],
      log: createBridgeLog({ debug: false, silent: true }),
      exchange: async (_url, request) => {
        const token = (request.headers.authorization ?? "").replace(/^Bearer /, "");
        sent.push(token);
        return answer(refuse(token) ? 401 : 200);
      },
    });
    const post = () =>
      exchange(new URL("http://127.0.0.1:1/mcp"), { method: "POST", headers: {}, body: "{}" }).then(
        (response) => response.status,
      );
    return { post, sent, recoveries: () => recoveries };
  }

  it("a request refused again with the token its recovery brought is sent again with the next one", async () => {
    // t1 expired, and t2 had expired too by the time the retry reached the server (it arrived late): t3 works.
    const tokens = rotatingTokens((token) => token === "t1" || token === "t2");
    expect(await tokens.post()).toBe(200);
    expect(tokens.sent).toEqual(["t1", "t2", "t3"]);
    expect(tokens.recoveries()).toBe(2);
  });

  it("gives up after three recoveries for one request: a server that refuses every token gets its 401 back", async () => {
    const tokens = rotatingTokens(() => true);
    expect(await tokens.post()).toBe(401);
    expect(tokens.sent).toEqual(["t1", "t2", "t3", "t4"]);
  });

  it("a recovery that brings back the token just refused ends the retries at once", async () => {
    let recoveries = 0;
    const sent: string[] = [];
    const exchange = createAuthorizedExchange({
      auth: {
        accessToken: async () => "same",
        recover: async () => {
          recoveries += 1;
          return "same";
        },
      },
      headers: [],
      log: createBridgeLog({ debug: false, silent: true }),
      exchange: async (_url, request) => {
        sent.push(request.headers.authorization ?? "");
        return answer(401);
      },
    });
    const status = (await exchange(new URL("http://127.0.0.1:1/mcp"), { method: "GET", headers: {} })).status;
    expect(status).toBe(401);
    expect(sent).toHaveLength(2);
    expect(recoveries).toBe(1);
  });
});
