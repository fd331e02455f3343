/** Which client signs in (src/auth/session/registration.ts): the stored registration, a pre-registered client, a client ID metadata document. */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionContext } from "../../../src/auth/session/context.js";
import { refusesClient } from "../../../src/auth/session/registration.js";
import { cleanUpSessions, setup } from "./helpers.js";

afterEach(cleanUpSessions);

describe("the client of a sign-in: registration", () => {
  it("a later sign-in on the same callback port reuses the client registration", async () => {
    const t = await setup();
    await t.session().signIn();
    await t.session().signIn();
    expect(t.browserOpens()).toBe(2);
    // The reused registration is first checked at /authorize (redirect not followed), then used by the browser.
    expect(t.tiny.authorizations).toHaveLength(3);
    expect(new Set(t.tiny.authorizations.map((a) => a.clientId)).size).toBe(1);
    expect(t.tiny.registrations).toBe(1);
  });

  it("a pre-registered client (--client-id, secret from the environment) skips registration and authenticates", async () => {
    const t = await setup({ preRegistered: { clientId: "pre-1", clientSecret: "s3cret" } });
    const token = await t.session({ clientId: "pre-1", clientSecret: "s3cret" }).recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrations).toBe(0);
    expect(t.tiny.authorizations[0]?.clientId).toBe("pre-1");
    expect(t.tiny.tokenClientAuth).toEqual(["basic:pre-1:s3cret"]);
  });

  it("a client ID metadata document URL is the client_id where the server supports it", async () => {
    const t = await setup({ clientIdMetadataDocuments: true });
    const clientMetadataUrl = "https://client.example/chat-mcp-bridge.json";
    const token = await t.session({ clientMetadataUrl }).recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrations).toBe(0);
    expect(t.tiny.authorizations[0]?.clientId).toBe(clientMetadataUrl);
  });

  it("a client metadata URL is ignored (registration instead) where the server does not support it", async () => {
    const t = await setup();
    await t.session({ clientMetadataUrl: "https://client.example/m.json" }).recover(await t.challenge());
    expect(t.tiny.registrations).toBe(1);
  });
});

/** A 400 error page that says invalid_client first and then goes on for `totalBytes`, generated as it is read. */
function hugeErrorPage(totalBytes: number) {
  const seen = { sent: 0, cancelled: false };
  const chunk = new TextEncoder().encode(`${"x".repeat(1023)}\n`);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("error=invalid_client\n"));
    },
    pull(controller) {
      if (seen.sent >= totalBytes) return controller.close();
      seen.sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  const context = {
    fetchFn: async () => new Response(body, { status: 400, headers: { "content-type": "text/plain" } }),
    log: () => {},
  } as unknown as SessionContext;
  return { context, seen };
}

describe("refusesClient reading an error page", () => {
  it("finds invalid_client at the top of a 64 MiB page without reading the page", async () => {
    const { context, seen } = hugeErrorPage(64 * 1024 * 1024);
    expect(await refusesClient(context, new URL("https://as.example/authorize?client_id=c"))).toBe(true);
    expect(seen.cancelled).toBe(true);
    expect(seen.sent).toBeLessThan(1024 * 1024);
  });
});
