/** A 2026-07-28 client over a 2025-era session with several calls open at once: a mid-call request goes to the call whose stream carried it. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2ThroughBridge } from "../fixtures/sdk2-client.js";
import { type RawBridge, spawnRawBridge } from "../fixtures/spawn-bridge.js";
import { type LegacySessionServer, startLegacySessionServer } from "./legacy-session-server.js";

let server: LegacySessionServer;
let configDir: string;

beforeAll(async () => {
  server = await startLegacySessionServer();
  configDir = mkdtempSync(join(tmpdir(), "bridge-eras-streams-"));
});
afterAll(async () => {
  await server.close();
  rmSync(configDir, { recursive: true, force: true });
});

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw-modern", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
};

function request(bridge: RawBridge, id: string, method: string, params: Record<string, unknown>): void {
  bridge.send(JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: ENVELOPE } }));
}

const parsed = (bridge: RawBridge) => bridge.lines.map((line) => JSON.parse(line) as Record<string, unknown>);

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("two modern calls in flight to a legacy server", () => {
  it("gives the input_required to the call whose stream the server's elicitation came on", async () => {
    const bridge = spawnRawBridge([server.url], { CHAT_CONFIG_DIR: configDir });
    try {
      request(bridge, "first", "tools/call", { name: "wait", arguments: { label: "one" } });
      await until(() => server.waiting() === 1, "the first call to run on the server");
      request(bridge, "second", "tools/call", { name: "ask", arguments: { question: "size?" } });

      const asked = await bridge.waitFor((m) => m.id === "second");
      const result = asked.result as { resultType: string; inputRequests: object; requestState: string };
      expect(result.resultType).toBe("input_required");
      const [[key, input]] = Object.entries(result.inputRequests) as [
        [string, { params: { message: string } }],
      ];
      expect(input.params.message).toBe("size?");
      expect(parsed(bridge).some((m) => m.id === "first")).toBe(false);

      request(bridge, "second-retry", "tools/call", {
        name: "ask",
        arguments: { question: "size?" },
        inputResponses: { [key]: { action: "accept", content: { answer: "large" } } },
        requestState: result.requestState,
      });
      const answered = await bridge.waitFor((m) => m.id === "second-retry");
      expect(JSON.stringify(answered.result)).toContain("large");
      expect(parsed(bridge).some((m) => m.id === "first")).toBe(false);

      server.release();
      const first = await bridge.waitFor((m) => m.id === "first");
      expect(first.result).toMatchObject({ content: [{ type: "text", text: "released one" }] });
    } finally {
      server.release();
      bridge.child.kill();
    }
  });

  it("completes both with an SDK v2 modern client: the elicitation answered for the second, the first released after", async () => {
    const asked: string[] = [];
    const { client, close } = await connectV2ThroughBridge([server.url], {
      era: "modern",
      env: { CHAT_CONFIG_DIR: configDir },
      capabilities: { elicitation: { form: {} } },
      answerElicitation: (message) => {
        asked.push(message);
        return { answer: `re: ${message}` };
      },
    });
    try {
      const first = client.callTool({ name: "wait", arguments: { label: "sdk" } });
      await until(() => server.waiting() === 1, "the first call to run on the server");
      const second = await client.callTool({ name: "ask", arguments: { question: "colour?" } });
      expect(JSON.stringify(second.content)).toContain("re: colour?");
      expect(asked).toEqual(["colour?"]);
      expect(server.waiting()).toBe(1);
      server.release();
      expect((await first).content).toEqual([{ type: "text", text: "released sdk" }]);
    } finally {
      server.release();
      await close();
    }
  });
});
