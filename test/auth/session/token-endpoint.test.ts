/** The token endpoint a user allowed over plain http (`--allow-http`): the SDK is handed it as https, yet the request and its DPoP proof name the http URL it goes to. */
import { DpopSession, refreshAuthorization } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import type { DiscoveredServer } from "../../../src/auth/discovery.js";
import { tokenEndpointArguments } from "../../../src/auth/session/token-endpoint.js";

const PLAIN = "http://auth.example.test/token";
const server: DiscoveredServer = {
  authorizationServerUrl: "http://auth.example.test",
  issuer: "http://auth.example.test",
  resource: "http://chat.example.test/mcp",
  metadata: {
    issuer: "http://auth.example.test",
    authorization_endpoint: "http://auth.example.test/authorize",
    token_endpoint: PLAIN,
    response_types_supported: ["code"],
  },
};

const claimsOf = (proof: string) =>
  JSON.parse(Buffer.from(proof.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;

describe("a plain http token endpoint with DPoP", () => {
  it("sends the refresh there with a proof for that URL, keeping the server's nonce across the retry", async () => {
    const dpop = await DpopSession.create();
    const sent: { url: string; proof: string }[] = [];
    const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
      const proof = new Headers(init?.headers).get("dpop") ?? "";
      sent.push({ url: String(input), proof });
      if (sent.length === 1) {
        return new Response(JSON.stringify({ error: "use_dpop_nonce" }), {
          status: 400,
          headers: { "content-type": "application/json", "dpop-nonce": "n-7" },
        });
      }
      return Response.json({ access_token: "at", token_type: "DPoP", expires_in: 60 });
    }) as typeof fetch;
    const endpoint = tokenEndpointArguments(server, fetchFn, dpop);
    const tokens = await refreshAuthorization(endpoint.authorizationServerUrl, {
      metadata: endpoint.metadata,
      clientInformation: { client_id: "c" },
      refreshToken: "rt",
      dpop,
      fetchFn: endpoint.fetchFn,
    });
    expect(tokens.token_type).toBe("DPoP");
    expect(sent.map((request) => request.url)).toEqual([PLAIN, PLAIN]);
    expect(sent.map((request) => claimsOf(request.proof).htu)).toEqual([PLAIN, PLAIN]);
    expect(claimsOf(sent[1]!.proof).nonce).toBe("n-7");
  });
});
