/** Commands that used to claim success for nothing, in-process: logout of a URL that matches no stored login (the bridge's logout, "Opening" without a browser: browser.test.ts; a busy port: process.test.ts; a task of another type: resolve-wrong-kind.test.ts). */
import { afterAll, describe, expect, it } from "vitest";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { cleanEnv, runInProcess } from "./helpers.js";

const SECRET = "cli-logout-secret-5d1e";
// A stored login with no browser and no loopback listener: a client that signs in as itself (client credentials).
const server = createRequestableReferenceServer({
  oauthClients: [{ client_id: "cli-logout", client_secret: SECRET, client_credentials_account: "acme" }],
});
afterAll(() => server.close());

describe("logout of a URL that matches no stored login", () => {
  it("chat-cli: exit 1, nothing removed, the stored logins listed; the real one still works", async () => {
    const cli = runInProcess(cleanEnv({ CHAT_MCP_CLIENT_SECRET: SECRET }), { fetch: server.fetch });
    const login = await cli([
      ...["--base-url", server.url, "login", "--token-store", "file"],
      ...["--client-credentials", "--client-id", "cli-logout"],
    ]);
    expect(login.code, login.stderr).toBe(0);

    const typo = await cli(["--base-url", `${server.url}/api`, "logout"]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain(`no stored login for ${server.url}/api, so nothing was removed`);
    expect(typo.stderr).toContain(`Stored logins (chat-cli signs in to <base URL>/v2): ${server.url}/v2`);
    expect(typo.stderr).not.toMatch(/Signed out/);
    expect((await cli(["--base-url", server.url, "whoami"])).code).toBe(0);

    const real = await cli(["--base-url", server.url, "logout"]);
    expect(real.code).toBe(0);
    expect(real.stderr).toContain(`Signed out of ${server.url}; its stored login was removed.`);
    const again = await cli(["--base-url", server.url, "logout"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("There are no stored logins.");
  });
});
