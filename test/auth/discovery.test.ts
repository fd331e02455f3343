/** `--resource`: the protected resource asked for when the metadata names another resource than the URL. */
import { describe, expect, it } from "vitest";
import { discoverServer } from "../../src/auth/discovery.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";

const reference = useRequestableReferenceServer();

// As a 401's WWW-Authenticate from a server whose endpoint is not where its metadata says would name it.
const options = () => ({
  fetchFn: reference.server.fetch as typeof fetch,
  allowHttp: false,
  log: () => {},
  resourceMetadataUrl: `${reference.server.url}/.well-known/oauth-protected-resource/mcp`,
});

describe("discovery with --resource", () => {
  it("refuses a URL the protected resource metadata does not cover", async () => {
    await expect(discoverServer(`${reference.server.url}/elsewhere`, options())).rejects.toThrow(
      /does not cover .*\/elsewhere.*check the server URL\)/,
    );
  });

  it("asks for the resource given instead of the URL when the metadata covers it", async () => {
    const discovered = await discoverServer(`${reference.server.url}/elsewhere`, {
      ...options(),
      resource: reference.server.mcpUrl,
    });
    expect(discovered.resource).toBe(reference.server.mcpUrl);
    await expect(
      discoverServer(reference.server.mcpUrl, { ...options(), resource: `${reference.server.url}/v2` }),
    ).rejects.toThrow(/check the server URL and --resource/);
  });
});
