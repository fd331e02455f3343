/** OAuth mix-up (RFC 9700 §4.4, RFC 9207): an authorization answer is held to the issuer the sign-in actually used, on every path. */
import { afterEach, describe, expect, it } from "vitest";
import { AuthRequiredError } from "../../../src/auth/index.js";
import { startTinyOAuthServer, type TinyOAuthServer } from "../fixtures/tiny-oauth-server.js";
import { cleanUpSessions, setup } from "./helpers.js";

const honestServers: TinyOAuthServer[] = [];
afterEach(async () => {
  await cleanUpSessions();
  await Promise.all(honestServers.splice(0).map((server) => server.close()));
});

async function honestServer(): Promise<TinyOAuthServer> {
  const server = await startTinyOAuthServer({ sendIss: true });
  honestServers.push(server);
  return server;
}

describe("a hostile MCP server without metadata forwards the browser to an honest authorization server", () => {
  it("the honest server's answer (iss = the honest issuer) is refused, and the code never reaches the hostile /token", async () => {
    const honest = await honestServer();
    const t = await setup({ legacy: true, forwardAuthorizeTo: honest.url });
    const failure = await t
      .session()
      .recover(await t.challenge())
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(AuthRequiredError);
    expect(String((failure as Error).message)).toMatch(/another authorization server/);
    // The person approved at the honest server; its code (and the verifier) went nowhere.
    expect(honest.authorizations).toHaveLength(1);
    expect(t.tiny.tokenClientAuth).toEqual([]);
    const honestCode = honest.secretsSeen[0];
    expect(honestCode).toBeDefined();
    expect(t.tiny.secretsSeen).not.toContain(honestCode);
  });

  it("control: a 2025-03-26 server that answers with its own origin as iss still signs in", async () => {
    const t = await setup({ legacy: true, sendIss: true });
    const token = await t.session().recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
  });

  it("control: a 2025-03-26 server that sends no iss (RFC 9207 is optional there) still signs in", async () => {
    const t = await setup({ legacy: true });
    const token = await t.session().recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
  });
});

describe("an answer naming another issuer is refused whatever the path", () => {
  it("with metadata: an iss that is not the metadata's issuer", async () => {
    const t = await setup({ sendIss: "https://elsewhere.example" });
    await expect(t.session().recover(await t.challenge())).rejects.toThrow(/another authorization server/);
    expect(t.tiny.tokenClientAuth).toEqual([]);
  });

  it("control: with metadata, the issuer's own iss signs in", async () => {
    const t = await setup({ sendIss: true });
    const token = await t.session().recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
  });
});
