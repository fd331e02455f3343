/** The authorized exchange with a DPoP-bound login: the DPoP scheme and a fresh proof per request, and a `use_dpop_nonce` challenge answered once with the nonce, never by signing in. */
import { DpopSession } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { createBridgeLog } from "../../../../src/bridge/log/log.js";
import {
  type BridgeAuth,
  createAuthorizedExchange,
} from "../../../../src/bridge/upstream/http/authorized-exchange.js";
import type { HttpAnswer } from "../../../../src/bridge/upstream/http/http-exchange.js";

function answer(status: number, headers: Record<string, string> = {}): HttpAnswer {
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: { get: (name) => headers[name] ?? null },
    body: { async *[Symbol.asyncIterator]() {}, cancel: async () => undefined },
    text: async () => "",
  };
}

const claimsOf = (proof: string) =>
  JSON.parse(Buffer.from(proof.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;

describe("createAuthorizedExchange with a DPoP-bound login", () => {
  it("sends DPoP with a fresh proof, and retries a use_dpop_nonce challenge once with the nonce", async () => {
    const session = await DpopSession.create();
    let recoveries = 0;
    const auth: BridgeAuth = {
      accessToken: async () => "bound-token",
      recover: async () => {
        recoveries += 1;
        return "other";
      },
      proofSigner: async () => session,
    };
    const sent: Record<string, string>[] = [];
    const exchange = createAuthorizedExchange({
      auth,
      headers: [],
      log: createBridgeLog({ debug: false, silent: true }),
      exchange: async (_url, request) => {
        sent.push(request.headers);
        if (claimsOf(request.headers.dpop ?? "").nonce === "n-1") return answer(200);
        return answer(401, {
          "www-authenticate": 'DPoP error="use_dpop_nonce", error_description="Use the nonce"',
          "dpop-nonce": "n-1",
        });
      },
    });
    const url = new URL("http://127.0.0.1:1/mcp?x=1");
    const response = await exchange(url, { method: "POST", headers: {}, body: "{}" });
    expect(response.status).toBe(200);
    expect(recoveries).toBe(0);
    expect(sent).toHaveLength(2);
    for (const headers of sent) expect(headers.authorization).toBe("DPoP bound-token");
    const [first, second] = sent.map((headers) => claimsOf(headers.dpop!));
    expect(first).toMatchObject({ htm: "POST", htu: "http://127.0.0.1:1/mcp" });
    expect(first!.nonce).toBeUndefined();
    expect(second!.nonce).toBe("n-1");
    expect(second!.jti).not.toBe(first!.jti);
    expect(second!.ath).toBeTypeOf("string");
  });

  it("keeps Bearer for a login without a signer", async () => {
    const sent: string[] = [];
    const exchange = createAuthorizedExchange({
      auth: { accessToken: async () => "plain", recover: async () => "plain" },
      headers: [],
      log: createBridgeLog({ debug: false, silent: true }),
      exchange: async (_url, request) => {
        sent.push(request.headers.authorization ?? "");
        return answer(200);
      },
    });
    await exchange(new URL("http://127.0.0.1:1/mcp"), { method: "GET", headers: {} });
    expect(sent).toEqual(["Bearer plain"]);
  });
});
