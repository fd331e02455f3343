/**
 * `--confirm-tool` and the server's own rounds of input, through the relays in process: an approval covers the call
 * it was given for and the rounds the server opened on it (each requestState it returned, used once), nothing else.
 */
import { describe, expect, it } from "vitest";
import { CONFIRM_INPUT_KEY, createConfirmToolStep } from "../../src/bridge/steps/confirm-tool.js";
import type { UpstreamAnswer } from "../../src/bridge/upstream/modern.js";
import {
  type Json,
  LEGACY_INITIALIZE,
  legacySessionRelay,
  MODERN_ENVELOPE,
  modernServerRelay,
} from "./fixtures/in-process-relays.js";

const ARGS = { chatId: "chat_1", message: "ship it" };
const elicit = (message: string) => ({
  method: "elicitation/create",
  params: { mode: "form", message, requestedSchema: { type: "object", properties: {} } },
});

/**
 * A lenient 2026-07-28 server: `send_message` asks two rounds (states `round-1`, `round-2`), and runs the call on any
 * other state it is handed (it trusts whoever holds one), as a server that keeps no state of its own may.
 */
function twoRoundServer() {
  const ran: Json[] = [];
  const serve = (method: string, params: Json): UpstreamAnswer => {
    if (method !== "tools/call") return { result: { resultType: "complete", tools: [] } };
    if (params.requestState === undefined)
      return {
        result: {
          resultType: "input_required",
          inputRequests: { q: elicit("first?") },
          requestState: "round-1",
        },
      };
    if (params.requestState === "round-1")
      return {
        result: {
          resultType: "input_required",
          inputRequests: { q: elicit("second?") },
          requestState: "round-2",
        },
      };
    ran.push(params);
    return { result: { resultType: "complete", content: [{ type: "text", text: "sent" }] } };
  };
  return { ran, serve };
}

/** The person behind the client: approves the bridge's question (or not), answers the server's. */
function person() {
  const state = { approves: true };
  const answer = (request: Json): Json => {
    const message = String((request.params as Json).message);
    if (!message.includes("wants to call the tool")) return { action: "accept", content: { answer: "yes" } };
    return state.approves ? { action: "accept", content: { approve: true } } : { action: "decline" };
  };
  return { state, answer };
}

const confirmStep = () => createConfirmToolStep({ patterns: ["send_message"], log: { info() {} } });

const resultOf = (answer: Json) => answer.result as Json;
const bridgeAsks = (answer: Json) => {
  const result = resultOf(answer);
  expect(result.resultType).toBe("input_required");
  expect(Object.keys(result.inputRequests as Json)).toEqual([CONFIRM_INPUT_KEY]);
  return result.requestState as string;
};
const toolText = (answer: Json) => (resultOf(answer).content as Array<{ text: string }>)[0]?.text;

describe("a modern client over a modern server", () => {
  const call = (extra: Json = {}) => ({
    _meta: MODERN_ENVELOPE,
    name: "send_message",
    arguments: ARGS,
    ...extra,
  });

  /** The honest flow: asked once, approved, then the server's two rounds continue it without a second question. */
  async function approvedRun() {
    const server = twoRoundServer();
    const side = modernServerRelay(server.serve, { steps: [confirmStep()] });
    const state = bridgeAsks(await side.request(1, "tools/call", call()));
    const approval = {
      inputResponses: { [CONFIRM_INPUT_KEY]: { action: "accept", content: { approve: true } } },
    };
    const first = resultOf(await side.request(2, "tools/call", call({ ...approval, requestState: state })));
    expect(first).toMatchObject({ resultType: "input_required", requestState: "round-1" });
    const answers = { inputResponses: { q: { action: "accept", content: { answer: "yes" } } } };
    const second = resultOf(
      await side.request(3, "tools/call", call({ ...answers, requestState: "round-1" })),
    );
    expect(second).toMatchObject({ resultType: "input_required", requestState: "round-2" });
    expect(toolText(await side.request(4, "tools/call", call({ ...answers, requestState: "round-2" })))).toBe(
      "sent",
    );
    expect(server.ran).toHaveLength(1);
    expect(side.sent).toHaveLength(3);
    return { ...server, ...side, answers };
  }

  it("the approved call and the server's rounds of it go through, one question in all", async () => {
    await approvedRun();
  });

  it.each([
    ["the server's last state again", "round-2"],
    ["an earlier state of the chain again", "round-1"],
    ["a state the server never issued", "forged-by-the-client"],
  ])("the same call with %s is asked about anew, nothing sent", async (_name, requestState) => {
    const { ran, sent, request, answers } = await approvedRun();
    bridgeAsks(await request(5, "tools/call", call({ ...answers, requestState })));
    expect(ran).toHaveLength(1);
    expect(sent).toHaveLength(3);
  });

  it("a server state of one approved call does not continue another call", async () => {
    const { sent, request, answers } = await approvedRun();
    const other = { _meta: MODERN_ENVELOPE, name: "send_message", arguments: { ...ARGS, message: "other" } };
    bridgeAsks(await request(5, "tools/call", { ...other, ...answers, requestState: "round-1" }));
    expect(sent).toHaveLength(3);
  });
});

describe("a legacy client over a modern server (the bridge runs the rounds)", () => {
  it("one question, the server's two rounds asked as elicitations, the call runs once; a replayed state is asked about", async () => {
    const server = twoRoundServer();
    const { state, answer } = person();
    const side = modernServerRelay(server.serve, { steps: [confirmStep()] }, answer);
    await side.request(1, "initialize", LEGACY_INITIALIZE);
    expect(toolText(await side.request(2, "tools/call", { name: "send_message", arguments: ARGS }))).toBe(
      "sent",
    );
    const messages = side.asked.map((request) => String((request.params as Json).message));
    expect(messages).toHaveLength(3);
    expect(messages[0]).toContain('wants to call the tool "send_message"');
    expect(messages.slice(1)).toEqual(["first?", "second?"]);
    expect(server.ran).toHaveLength(1);

    state.approves = false;
    const replay = await side.request(3, "tools/call", {
      name: "send_message",
      arguments: ARGS,
      inputResponses: { q: { action: "accept", content: { answer: "yes" } } },
      requestState: "round-2",
    });
    expect(toolText(replay)).toContain("denied by the user");
    expect(side.asked).toHaveLength(4);
    expect(server.ran).toHaveLength(1);
  });
});

describe("a legacy client over a 2025 session (the server asks in-band; no requestState is the bridge's)", () => {
  it("an approval covers one send: the same call with any requestState is asked about anew", async () => {
    const { state, answer } = person();
    const { legacy, sent } = legacySessionRelay({ steps: [confirmStep()] }, answer);
    await legacy.request(1, "initialize", LEGACY_INITIALIZE);
    expect(toolText(await legacy.request(2, "tools/call", { name: "send_message", arguments: ARGS }))).toBe(
      "ran",
    );
    state.approves = false;
    const replay = await legacy.request(3, "tools/call", {
      name: "send_message",
      arguments: ARGS,
      requestState: "anything",
    });
    expect(toolText(replay)).toContain("denied by the user");
    expect(legacy.asked).toHaveLength(2);
    expect(sent.filter((message) => "method" in message && message.method === "tools/call")).toHaveLength(1);
  });
});

describe("a modern client over a 2025 session (the steps judge the call before the translator carries it)", () => {
  const call = (extra: Json = {}) => ({
    _meta: MODERN_ENVELOPE,
    name: "send_message",
    arguments: ARGS,
    ...extra,
  });
  const toolCalls = (sent: Json[]) => sent.filter((message) => message.method === "tools/call");

  it("asks the client itself, sends the approved call once without the bridge's state, and refuses the state replayed", async () => {
    const { modern, sent } = legacySessionRelay({ steps: [confirmStep()] });
    const state = bridgeAsks(await modern.request(1, "tools/call", call()));
    expect(toolCalls(sent as Json[])).toEqual([]);
    const approval = {
      inputResponses: { [CONFIRM_INPUT_KEY]: { action: "accept", content: { approve: true } } },
      requestState: state,
    };
    const approved = await modern.request(2, "tools/call", call(approval));
    expect(resultOf(approved)).toMatchObject({ resultType: "complete" });
    expect(toolText(approved)).toBe("ran");
    const upstream = toolCalls(sent as Json[]);
    expect(upstream).toHaveLength(1);
    expect(upstream[0]?.params).toEqual({ name: "send_message", arguments: ARGS });
    const replay = await modern.request(3, "tools/call", call(approval));
    expect(toolText(replay)).toContain("unknown or has expired");
    expect(toolCalls(sent as Json[])).toHaveLength(1);
  });
});

describe("a modern client over a 2025 session whose server asks in-band", () => {
  it("one question from the bridge, then the server's question as the translator's round, and the call runs once", async () => {
    const { modern, sent } = legacySessionRelay({
      steps: [confirmStep()],
      serverAsks: elicit("first?").params,
    });
    const call = (extra: Json = {}) => ({
      _meta: MODERN_ENVELOPE,
      name: "send_message",
      arguments: ARGS,
      ...extra,
    });
    const state = bridgeAsks(await modern.request(1, "tools/call", call()));
    const approval = {
      inputResponses: { [CONFIRM_INPUT_KEY]: { action: "accept", content: { approve: true } } },
      requestState: state,
    };
    const round = resultOf(await modern.request(2, "tools/call", call(approval)));
    expect(round.resultType).toBe("input_required");
    const [key] = Object.keys(round.inputRequests as Json);
    expect(key).not.toBe(CONFIRM_INPUT_KEY);
    const answers = { inputResponses: { [key as string]: { action: "accept", content: { answer: "yes" } } } };
    const done = await modern.request(
      3,
      "tools/call",
      call({ ...answers, requestState: round.requestState }),
    );
    expect(toolText(done)).toBe("ran");
    const calls = (sent as Json[]).filter((message) => message.method === "tools/call");
    expect(calls).toHaveLength(1);
  });
});
