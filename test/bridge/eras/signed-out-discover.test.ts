/** The bridge's own `server/discover` answer (signed out, the server not yet asked): a face a host will use. */
import { describe, expect, it } from "vitest";
import { bridgeDiscoverResult } from "../../../src/bridge/translate/discover.js";

describe("the bridge's own DiscoverResult", () => {
  it("advertises what the bridge relays, so a 2026 host lists tools and that request signs in", () => {
    const result = bridgeDiscoverResult(undefined);
    expect(result.capabilities).toEqual({ tools: { listChanged: true }, prompts: {}, resources: {} });
    expect(result.supportedVersions).toEqual(expect.arrayContaining(["2026-07-28", "2025-11-25"]));
  });

  it("gives each answer its own capabilities object", () => {
    const first = bridgeDiscoverResult(undefined) as { capabilities: { tools: Record<string, unknown> } };
    first.capabilities.tools.listChanged = false;
    expect((bridgeDiscoverResult(undefined) as typeof first).capabilities.tools).toEqual({
      listChanged: true,
    });
  });

  it("passes a modern server's own answer through, marked complete", () => {
    const server = { supportedVersions: ["2026-07-28"], capabilities: { tools: { listChanged: true } } };
    expect(bridgeDiscoverResult(server)).toEqual({ ...server, resultType: "complete" });
  });
});
