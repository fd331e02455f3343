/** The bridge under load: many calls in flight through one process, every one answered, nothing on stderr. */
import { describe, expect, it } from "vitest";
import { connectThroughBridge } from "../fixtures/spawn-bridge.js";
import { freshTestServerEachTest } from "../fixtures/test-mcp-server.js";

const IN_FLIGHT = 300;

const each = freshTestServerEachTest();

const textOf = (result: unknown): string =>
  (result as { content: { text?: string }[] }).content.map((part) => part.text ?? "").join("");

describe(`${IN_FLIGHT} concurrent tools/call through one bridge`, () => {
  it("answers each with its own result and writes no warning (e.g. MaxListenersExceededWarning) on stderr", async () => {
    each.bridge = await connectThroughBridge([each.server.url]);
    const texts = Array.from({ length: IN_FLIGHT }, (_, index) => `load-${index}`);
    const results = await Promise.all(
      texts.map((text) => each.bridge!.client.callTool({ name: "echo", arguments: { text } })),
    );
    expect(results.map(textOf)).toEqual(texts);
    // A second wave reuses the connections the first one opened.
    const again = await Promise.all(
      texts.map((text) => each.bridge!.client.callTool({ name: "echo", arguments: { text } })),
    );
    expect(again.map(textOf)).toEqual(texts);
    expect(each.bridge.stderr()).toBe("");
  });
});
