/**
 * The first sign-in when the person is slow (a second factor, an SSO page: longer than a host's 60 s), in a host with
 * no request time-out (the AI SDK, a 2026 client: its first list is never empty, and its next start has the tools) and in one that follows `list_changed` (mcp-use: its cached tools should fill in without a restart); and a
 * one-shot host (the Inspector CLI) whose sign-in the person finishes after the bridge exited: the next run has the
 * tools. All three run at once against one server. Time is scaled by ten: the person takes 7 s, and the bridge's 45 s
 * sign-in wait is given as 4.5 s (CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS); that the unscaled wait is one deadline per start
 * is test/bridge/sign-in-gate.test.ts's, in fake time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { TOOL_NAMES } from "../../src/wire/index.js";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";
import { bridgeServer, hostLibrary } from "./host-libraries.js";
import { runInspector } from "./inspector-cli.js";
import { browserEnv, chromiumMissing, type Person, startPerson } from "./person.js";

/** Longer than the scaled sign-in wait below, as 70 s is longer than a library's 60 s time-out. */
const SLOW_PERSON_MS = 7_000;
/** The bridge's sign-in wait (45 s), scaled down by ten. */
const SCALED_SIGN_IN_WAIT = { CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS: "4500" };
const SEVEN = [...TOOL_NAMES].sort();

let server: ReferenceServer;
let person: Person;
beforeAll(async () => {
  if (chromiumMissing) return;
  server = await startReferenceServer({ port: 0, rateLimit: false, deviceAuthorization: false });
  person = await startPerson();
}, 60_000);
afterAll(async () => {
  await person?.close();
  await server?.close();
});

/** Polls `read` until it returns the seven tools, bounded by `timeoutMs`. */
async function toolsWithin(read: () => Promise<string[]>, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let tools = await read();
  while (tools.length < SEVEN.length && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 250));
    tools = await read();
  }
  return tools;
}

describe.concurrent("a person who approves after 7 s", needs("chromium", chromiumMissing), () => {
  it("AI SDK (no request time-out, a 2026 client): its first list is sign_in; the next start has the tools", async () => {
    const dir = scratchDir("cmb-host-slow-ai-");
    const browser = browserEnv(dir);
    const approved = person.approve(browser.urlFile, { thinkMs: SLOW_PERSON_MS });
    approved.catch(() => {});
    const config = bridgeServer(server.mcpUrl, {
      CHAT_CONFIG_DIR: dir,
      ...browser.env,
      ...SCALED_SIGN_IN_WAIT,
    });
    const running = await hostLibrary("AI SDK").start(config);
    try {
      console.info(
        `AI SDK, slow person: first list of ${running.firstList.length} tools after ${running.listedAfterMs} ms`,
      );
      // sign_in by the sign-in wait, though the AI SDK opens with a bare server/discover, which may not sign in.
      expect(running.firstList).toEqual(["sign_in"]);
      await approved;
    } finally {
      await running.close();
    }
    const next = await hostLibrary("AI SDK").start(config);
    try {
      expect(next.firstList).toEqual(SEVEN);
      const result = await next.call("list_chats", {});
      expect(result.ok, result.text).toBe(true);
    } finally {
      await next.close();
    }
  }, 180_000);

  it("mcp-use (follows list_changed): the tools it holds fill in after the sign-in, without a restart", async () => {
    const dir = scratchDir("cmb-host-slow-mcp-use-");
    const browser = browserEnv(dir);
    const approved = person.approve(browser.urlFile, { thinkMs: SLOW_PERSON_MS });
    approved.catch(() => {});
    const running = await hostLibrary("mcp-use").start(
      bridgeServer(server.mcpUrl, { CHAT_CONFIG_DIR: dir, ...browser.env, ...SCALED_SIGN_IN_WAIT }),
    );
    try {
      const { approvedAt } = await approved;
      const tools = await toolsWithin(() => running.currentTools(), 30_000);
      console.info(
        `mcp-use, slow person: first list of ${running.firstList.length} tools after ${running.listedAfterMs} ms, ` +
          `${tools.length} tools ${Date.now() - approvedAt} ms after the approval`,
      );
      // The first list was answered before the sign-in ended (the bridge's scaled wait): the tools came after it.
      expect(running.firstList).not.toEqual(SEVEN);
      expect(tools).toEqual(SEVEN);
      const result = await running.call("list_chats", {});
      expect(result.ok, result.text).toBe(true);
    } finally {
      await running.close();
    }
  }, 180_000);

  it("Inspector CLI (one-shot): the sign-in finished after the bridge exited is stored; the next run has the tools", async () => {
    const dir = scratchDir("cmb-host-slow-inspector-");
    const browser = browserEnv(dir);
    const config = bridgeServer(server.mcpUrl, {
      CHAT_CONFIG_DIR: dir,
      ...browser.env,
      ...SCALED_SIGN_IN_WAIT,
    });
    const first = runInspector(dir, config, ["--method", "tools/list"]);
    // The person gets to the page only once the host (and its bridge) is gone.
    const approved = person.approve(browser.urlFile, { thinkMs: 2_000, before: first });
    approved.catch(() => {});
    const firstRun = await first;
    await approved;
    const second = await runInspector(dir, config, ["--method", "tools/list"]);
    console.info(
      `Inspector CLI: first run ${firstRun.tools.length} tools (exit ${firstRun.code}, ${firstRun.elapsedMs} ms), ` +
        `next run ${second.tools.length} tools (exit ${second.code}, ${second.elapsedMs} ms)`,
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.tools).toEqual(SEVEN);
  }, 240_000);
});
