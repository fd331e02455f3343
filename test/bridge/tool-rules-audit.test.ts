/** A `--confirm-tool`, `--ignore-tool` or `--read-only` rule that matches no listed tool: named with the closest tool, said once per process, in both eras' relays. */
import { describe, expect, it } from "vitest";
import type { ClientContext } from "../../src/bridge/messages/request-model.js";
import {
  listedTools,
  ToolRulesAudit,
  toolRulesWarnings,
  type UnmatchedRule,
  unmatchedToolRules,
} from "../../src/bridge/steps/tool-rules-audit.js";
import {
  type Json,
  LEGACY_INITIALIZE,
  legacySessionRelay,
  MODERN_ENVELOPE,
  modernServerRelay,
} from "./fixtures/in-process-relays.js";

const REFERENCE_TOOLS = [
  { name: "create_chat", annotations: { readOnlyHint: false } },
  { name: "list_chats", annotations: { readOnlyHint: true } },
  { name: "get_chat", annotations: { readOnlyHint: true } },
  { name: "send_message", annotations: { readOnlyHint: false } },
  { name: "resolve_task" },
];
const tools = listedTools({ tools: REFERENCE_TOOLS }) ?? [];
const client: ClientContext = {
  era: "legacy",
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

describe("unmatchedToolRules", () => {
  it("--confirm-tool send-message (the tool is send_message): named, with the tool meant", () => {
    expect(unmatchedToolRules({ confirmTools: ["send-message", "resolve_*"] }, tools)).toEqual([
      {
        flag: "--confirm-tool",
        pattern: "send-message",
        closest: "send_message",
        warning:
          '--confirm-tool "send-message" matches no tool the server lists, so it asks about nothing: the tool meant runs without asking; did you mean send_message?',
      },
    ]);
  });

  it("--ignore-tool with a wrong case or a typo names the tool meant; a far-off pattern names what is listed", () => {
    const unmatched = unmatchedToolRules({ ignoreTools: ["Create_Chat", "get_chta", "delete_*"] }, tools);
    expect(unmatched.map((rule) => [rule.pattern, rule.closest])).toEqual([
      ["Create_Chat", "create_chat"],
      ["get_chta", "get_chat"],
      ["delete_*", undefined],
    ]);
    expect(unmatched[2]?.warning).toBe(
      '--ignore-tool "delete_*" matches no tool the server lists, so it hides nothing; the server lists create_chat, list_chats, get_chat, send_message, resolve_task',
    );
  });

  it("--read-only with no tool annotated readOnlyHint: true says every tool is hidden", () => {
    const writers = tools.map((tool) => ({ ...tool, readOnly: false }));
    expect(unmatchedToolRules({ readOnly: true }, writers)).toEqual([
      {
        flag: "--read-only",
        warning:
          "--read-only: the server annotates no tool readOnlyHint: true, so every tool is hidden; the server lists create_chat, list_chats, get_chat, send_message, resolve_task",
      },
    ]);
    expect(unmatchedToolRules({ readOnly: true }, tools)).toEqual([]);
  });

  it('--read-only names the App-only tools it hides (visibility ["app"], not readOnlyHint), and only those', () => {
    const withApp = listedTools({
      tools: [
        ...REFERENCE_TOOLS,
        { name: "save_layout", _meta: { ui: { resourceUri: "ui://a", visibility: ["app"] } } },
        { name: "show_chart", _meta: { ui: { visibility: ["app"] } }, annotations: { readOnlyHint: true } },
        { name: "render", _meta: { ui: { visibility: ["model", "app"] } } },
      ],
    });
    expect(unmatchedToolRules({ readOnly: true }, withApp ?? [])).toEqual([
      {
        flag: "--read-only",
        warning:
          "--read-only also hides the tools only MCP Apps call (save_layout): not annotated readOnlyHint: true, they may write, so an App that calls them shows but cannot act",
      },
    ]);
    expect(unmatchedToolRules({ ignoreTools: ["save_layout"] }, withApp ?? [])).toEqual([]);
  });

  it("rules that match say nothing; an empty list makes every rule unmatched", () => {
    expect(
      unmatchedToolRules({ confirmTools: ["*_chat"], ignoreTools: ["create_chat"], readOnly: true }, tools),
    ).toEqual([]);
    const none = unmatchedToolRules({ confirmTools: ["send_message"], readOnly: true }, []);
    expect(none.map((rule) => rule.warning.split("; ").at(-1))).toEqual([
      "the server lists no tools",
      "the server lists no tools",
    ]);
  });

  it("a hostile tool name is shown short and inert", () => {
    const listed = listedTools({ tools: [{ name: `send_messag\u001b]0;x\u0007${"e".repeat(500)}` }] }) ?? [];
    const [rule] = unmatchedToolRules({ confirmTools: ["nothing-alike"] }, listed);
    expect(rule?.warning).not.toMatch(/[\u001b\u0007]/);
    expect(rule?.warning.length).toBeLessThan(300);
  });
});

describe("ToolRulesAudit", () => {
  function audit(rules: Parameters<typeof unmatchedToolRules>[0]) {
    const warned: UnmatchedRule[] = [];
    return { warned, audit: new ToolRulesAudit(rules, (rule) => warned.push(rule)) };
  }

  it("judges at the first list and never again", () => {
    const { warned, audit: rules } = audit({ confirmTools: ["send-message"] });
    rules.observe({ tools: REFERENCE_TOOLS }, client);
    rules.observe({ tools: REFERENCE_TOOLS }, client);
    rules.observe({ tools: [] }, client);
    expect(warned.map((rule) => rule.pattern)).toEqual(["send-message"]);
  });

  it("waits for the last page of a list: a rule matching a tool of a later page is not warned", () => {
    const { warned, audit: rules } = audit({ confirmTools: ["resolve_task"] });
    rules.observe({ tools: REFERENCE_TOOLS.slice(0, 2), nextCursor: "p2" }, client);
    expect(warned).toEqual([]);
    rules.observe({ tools: REFERENCE_TOOLS.slice(2) }, client);
    expect(warned).toEqual([]);
  });

  it("a list without end is judged on its first 10 000 tools", () => {
    const { warned, audit: rules } = audit({ ignoreTools: ["never"] });
    const page = {
      tools: Array.from({ length: 1000 }, (_, i) => ({ name: `tool_${i}` })),
      nextCursor: "more",
    };
    for (let i = 0; i < 10; i++) rules.observe(page, client);
    expect(warned).toHaveLength(1);
  });

  it("an answer that is not a list is not a list", () => {
    const { warned, audit: rules } = audit({ confirmTools: ["send-message"] });
    rules.observe({ tools: "none" }, client);
    expect(warned).toEqual([]);
  });
});

const isWarning = (message: Json) => message.method === "notifications/message";

describe.each(["legacy", "modern"] as const)("a %s client, the warning on both eras' relays", (era) => {
  function setup(server: "modern" | "legacy", level?: string) {
    const logged: string[] = [];
    const written: Json[] = [];
    // The audit writes to the client through the same toClient the relay answers on.
    let deliver: (message: Json) => void = () => undefined;
    const onToolsListed = toolRulesWarnings(
      { confirmTools: ["send-message"], ignoreTools: ["create_chat"] },
      { info: (line) => logged.push(line) },
      (message) => deliver(message as Json),
    );
    const side =
      server === "modern"
        ? modernServerRelay(() => ({ result: { tools: REFERENCE_TOOLS } }), {
            ...(onToolsListed ? { onToolsListed } : {}),
          })
        : era === "legacy"
          ? legacySessionRelay({ tools: REFERENCE_TOOLS, ...(onToolsListed ? { onToolsListed } : {}) }).legacy
          : legacySessionRelay({ tools: REFERENCE_TOOLS, ...(onToolsListed ? { onToolsListed } : {}) })
              .modern;
    deliver = (message) => {
      written.push(message);
      side.toClient.push(message);
    };
    const params =
      era === "modern"
        ? { _meta: { ...MODERN_ENVELOPE, ...(level ? { "io.modelcontextprotocol/logLevel": level } : {}) } }
        : undefined;
    const list = async (id: number) => {
      if (era === "legacy" && id === 2) {
        await side.request(1, "initialize", LEGACY_INITIALIZE);
        if (level) await side.request(100, "logging/setLevel", { level });
      }
      return side.request(id, "tools/list", params);
    };
    return { logged, written, side, list };
  }

  it.each(["modern", "legacy"] as const)(
    "over a %s server, a client that set a level: on stderr/log and as a notifications/message warning before the list, once",
    async (server) => {
      const { logged, written, side, list } = setup(server, "warning");
      await list(2);
      await list(3);
      expect(logged).toEqual([expect.stringContaining('--confirm-tool "send-message" matches no tool')]);
      expect(logged[0]).toContain("did you mean send_message?");
      // Known gap: over a 2025 session the policy sees the session's client, not a 2026 client's per-request
      // log level, so such a client is not sent the warning (the log and stderr have it).
      if (era === "modern" && server === "legacy") {
        expect(written).toEqual([]);
        return;
      }
      expect(written).toEqual([
        {
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "warning", logger: "chat-mcp-bridge", data: logged[0] },
        },
      ]);
      const order = side.toClient.filter(
        (message) => isWarning(message) || message.id === 2 || message.id === 3,
      );
      expect(order.map((message) => (isWarning(message) ? "warning" : message.id))).toEqual([
        "warning",
        2,
        3,
      ]);
    },
  );

  it("a client that asked for no log messages is not sent one (the Vercel AI SDK fails on it); the log has it", async () => {
    const { logged, written, list } = setup("modern");
    await list(2);
    expect(logged).toHaveLength(1);
    expect(written).toEqual([]);
  });

  it("a client that asked for errors only is not sent the warning; the log still has it", async () => {
    const { logged, written, list } = setup("modern", "error");
    await list(2);
    expect(logged).toHaveLength(1);
    expect(written).toEqual([]);
  });
});
