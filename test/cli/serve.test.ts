/** chat-cli serve's note beside the npx config, as a function (serving on a port, and its flags' refusals: process.test.ts). */
import { describe, expect, it } from "vitest";
import { notOnRegistryNote } from "../../src/cli/commands/serve.js";

describe("notOnRegistryNote (serve and the demo print it beside the npx config)", () => {
  it("says npx cannot fetch the package yet and gives the bin path to run with node, or npm link", () => {
    const text = notOnRegistryNote("/opt/cmb/bin/chat-mcp-bridge.js").join("\n");
    expect(text).toContain("not on the npm registry yet");
    expect(text).toContain('{"command":"node","args":["/opt/cmb/bin/chat-mcp-bridge.js","<mcp-url>"]}');
    expect(text).toContain("`npm link`");
    expect(text).toContain('{"command":"chat-mcp-bridge","args":["<mcp-url>"]}');
  });

  it("from an installed package: no `npm link`, the installed bin to run with node", () => {
    const text = notOnRegistryNote("/app/node_modules/chat-mcp-bridge/bin/chat-mcp-bridge.js", {
      checkout: false,
    }).join("\n");
    expect(text).not.toContain("npm link");
    expect(text).not.toContain("checkout");
    expect(text).toContain(
      '{"command":"node","args":["/app/node_modules/chat-mcp-bridge/bin/chat-mcp-bridge.js","<mcp-url>"]}',
    );
  });
});
