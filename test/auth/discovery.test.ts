/** `--resource`: the protected resource asked for when the metadata names another resource than the URL. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverServer } from "../../src/auth/discovery.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0 });
});
afterAll(async () => {
  await server?.close();
});

// As a 401's WWW-Authenticate from a server whose endpoint is not where its metadata says would name it.
const options = () => ({
  fetchFn: fetch,
  allowHttp: false,
  log: () => {},
  resourceMetadataUrl: `${server.url}/.well-known/oauth-protected-resource/mcp`,
});

describe("discovery with --resource", () => {
  it("refuses a URL the protected resource metadata does not cover", async () => {
    await expect(discoverServer(`${server.url}/elsewhere`, options())).rejects.toThrow(
      /does not cover .*\/elsewhere.*check the server URL\)/,
    );
  });

  it("asks for the resource given instead of the URL when the metadata covers it", async () => {
    const discovered = await discoverServer(`${server.url}/elsewhere`, {
      ...options(),
      resource: server.mcpUrl,
    });
    expect(discovered.resource).toBe(server.mcpUrl);
    await expect(
      discoverServer(server.mcpUrl, { ...options(), resource: `${server.url}/v2` }),
    ).rejects.toThrow(/check the server URL and --resource/);
  });
});
