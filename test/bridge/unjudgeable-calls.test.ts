/**
 * A `tools/call` the tool rules cannot judge (no tool name, a name that is not a string, arguments that are not an
 * object...) is refused with -32602 and never sent, in both eras and both directions of translation: a server that
 * looks tools up loosely must not get the chance to run a hidden tool.
 */
import { describe, expect, it } from "vitest";
import { createConfirmToolStep } from "../../src/bridge/steps/confirm-tool.js";
import { type ToolCallStep, ToolFilter, toolFilterStep } from "../../src/bridge/steps/index.js";
import {
  type ClientSide,
  type Json,
  LEGACY_INITIALIZE,
  legacySessionRelay,
  MODERN_ENVELOPE,
  modernServerRelay,
} from "./fixtures/in-process-relays.js";

const TOOLS = [
  { name: "resolve_task", annotations: { readOnlyHint: false } },
  { name: "list_chats", annotations: { readOnlyHint: true } },
];

/** The rules under test, each as run.ts builds its steps. */
const RULES: Array<[string, () => { steps: ToolCallStep[]; toolFilter?: ToolFilter }]> = [
  [
    "--ignore-tool resolve_*",
    () => {
      const filter = ToolFilter.from({ ignoreTools: ["resolve_*"] })!;
      return { steps: [toolFilterStep(filter)], toolFilter: filter };
    },
  ],
  [
    "--read-only",
    () => {
      const filter = ToolFilter.from({ readOnly: true })!;
      filter.filterListResult({ tools: TOOLS });
      return { steps: [toolFilterStep(filter)], toolFilter: filter };
    },
  ],
  [
    "--confirm-tool resolve_*",
    () => ({ steps: [createConfirmToolStep({ patterns: ["resolve_*"], log: { info() {} } })] }),
  ],
];

/** Params a loose server might still run as `resolve_task`, or whose parts the rules read cannot be read. */
const EVERY_ERA: Array<[string, Json]> = [
  ["no tool name", { arguments: { chatId: "c" } }],
  ["a name in an array", { name: ["resolve_task"], arguments: {} }],
  ["a name in an object", { name: { name: "resolve_task" }, arguments: {} }],
  ["a number for a name", { name: 7, arguments: {} }],
  ["arguments that are a string", { name: "resolve_task", arguments: "chatId=c" }],
  ["arguments in an array", { name: "list_chats", arguments: [{ chatId: "c" }] }],
  ["null arguments", { name: "list_chats", arguments: null }],
];
/** What only a client whose params reach the steps whole can send (a modern client's state is the bridge's own over a 2025 session). */
const PARAMS_WHOLE: Array<[string, Json]> = [
  ["a requestState that is not a string", { name: "resolve_task", arguments: {}, requestState: 5 }],
  ["inputResponses that are a string", { name: "resolve_task", arguments: {}, inputResponses: "yes" }],
];
const LEGACY_ONLY: Array<[string, Json]> = [["_meta that is a string", { name: "resolve_task", _meta: "x" }]];

const toolCalls = (sent: Array<{ method?: unknown }>) =>
  sent.filter((message) => message.method === "tools/call");

/** Each path from a client to a server, with the calls it sent upstream and its client side ready to call. */
const PATHS: Array<
  [
    string,
    Array<[string, unknown]>,
    (
      parts: ReturnType<(typeof RULES)[number][1]>,
    ) => Promise<{ side: ClientSide; upstreamCalls: () => number; modern: boolean }>,
  ]
> = [
  [
    "a legacy client over a 2025 session",
    [...EVERY_ERA, ...PARAMS_WHOLE, ...LEGACY_ONLY, ["params in an array", ["resolve_task"]]],
    async (parts) => {
      const { legacy, sent } = legacySessionRelay({ ...parts, tools: TOOLS });
      await legacy.request(1, "initialize", LEGACY_INITIALIZE);
      return { side: legacy, upstreamCalls: () => toolCalls(sent as Json[]).length, modern: false };
    },
  ],
  [
    "a modern client over a 2025 session",
    EVERY_ERA,
    async (parts) => {
      const { modern, sent } = legacySessionRelay({ ...parts, tools: TOOLS });
      return { side: modern, upstreamCalls: () => toolCalls(sent as Json[]).length, modern: true };
    },
  ],
  [
    "a legacy client over a modern server",
    [...EVERY_ERA, ...PARAMS_WHOLE, ...LEGACY_ONLY, ["params in an array", ["resolve_task"]]],
    async (parts) => {
      const relay = modernServerRelay(
        () => ({ result: { content: [{ type: "text", text: "ran" }] } }),
        parts,
      );
      await relay.request(1, "initialize", LEGACY_INITIALIZE);
      return { side: relay, upstreamCalls: () => toolCalls(relay.sent).length, modern: false };
    },
  ],
  [
    "a modern client over a modern server",
    [...EVERY_ERA, ...PARAMS_WHOLE],
    async (parts) => {
      const relay = modernServerRelay(
        () => ({ result: { content: [{ type: "text", text: "ran" }] } }),
        parts,
      );
      return { side: relay, upstreamCalls: () => toolCalls(relay.sent).length, modern: true };
    },
  ],
];

describe.each(RULES)("with %s", (_rule, rules) => {
  describe.each(PATHS)("%s", (_path, cases, open) => {
    it.each(cases)("a call with %s is refused with -32602, nothing sent or asked", async (_name, params) => {
      const { side, upstreamCalls, modern } = await open(rules());
      const sentParams = modern ? { ...(params as Json), _meta: MODERN_ENVELOPE } : params;
      const answer = await side.request(10, "tools/call", sentParams);
      expect(answer.error).toMatchObject({ code: -32602 });
      expect((answer.error as { message: string }).message).toContain("not sent to the server");
      expect(upstreamCalls()).toBe(0);
      expect(side.asked).toEqual([]);
    });
  });
});

describe("a call sent as a notification that cannot be judged", () => {
  it("is dropped by the 2025 relay: nothing sent, nothing answered", async () => {
    const filter = ToolFilter.from({ ignoreTools: ["resolve_*"] })!;
    const { legacy, sent } = legacySessionRelay({
      steps: [toolFilterStep(filter)],
      toolFilter: filter,
      tools: TOOLS,
    });
    await legacy.request(1, "initialize", LEGACY_INITIALIZE);
    legacy.send({ jsonrpc: "2.0", method: "tools/call", params: { name: ["resolve_task"] } });
    await legacy.request(2, "ping");
    expect(toolCalls(sent as Json[])).toEqual([]);
    expect(legacy.toClient.map((message) => message.id)).toEqual([1, 2]);
  });
});

describe("a listed tool whose name is not a string", () => {
  it("is left out of the list the client sees (no rule can judge it)", () => {
    const filter = ToolFilter.from({ ignoreTools: ["resolve_*"] })!;
    const listed = filter.filterListResult({
      tools: [...TOOLS, { name: ["resolve_task"] }, { title: "none" }],
    });
    expect((listed as { tools: Json[] }).tools.map((tool) => tool.name)).toEqual(["list_chats"]);
  });
});
