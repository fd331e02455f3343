/** chat-cli serve's note beside the npx config, as a function (serving on a port, and its flags' refusals: process.test.ts). */
import { describe, expect, it } from "vitest";
import { localBridgeNote } from "../../src/cli/commands/serve.js";

describe("localBridgeNote (serve and the demo print it beside the stdio config)", () => {
  it("gives this checkout's bin to run with node, or npm link, and the npx config of the release on npm", () => {
    const text = localBridgeNote("/opt/cmb/bin/chat-mcp-bridge.js").join("\n");
    expect(text).not.toContain("not on the npm registry");
    expect(text).toContain(
      'The release on npm: {"mcpServers":{"chat":{"command":"npx","args":["-y","chat-mcp-bridge","<mcp-url>"]}}}',
    );
    expect(text).toContain('{"command":"node","args":["/opt/cmb/bin/chat-mcp-bridge.js","<mcp-url>"]}');
    expect(text).toContain("`npm link`");
    expect(text).toContain('{"command":"chat-mcp-bridge","args":["<mcp-url>"]}');
  });

  it("from an installed package: no `npm link`, the installed bin to run with node", () => {
    const text = localBridgeNote("/app/node_modules/chat-mcp-bridge/bin/chat-mcp-bridge.js", {
      checkout: false,
    }).join("\n");
    expect(text).not.toContain("npm link");
    expect(text).not.toContain("checkout");
    expect(text).toContain(
      '{"command":"node","args":["/app/node_modules/chat-mcp-bridge/bin/chat-mcp-bridge.js","<mcp-url>"]}',
    );
  });
});
