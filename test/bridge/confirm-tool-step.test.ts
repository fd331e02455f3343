/** The --confirm-tool step on its own: ask, approve, deny, refuse without elicitation, drop notifications, and its bounded state. */
import { describe, expect, it } from "vitest";
import type { ClientContext } from "../../src/bridge/messages/request-model.js";
import {
  CONFIRM_INPUT_KEY,
  CONFIRM_STATE_PREFIX,
  createConfirmToolStep,
} from "../../src/bridge/steps/confirm-tool.js";
import {
  runToolCallSteps,
  type StepOutcome,
  type ToolCallContext,
  type ToolCallStep,
} from "../../src/bridge/steps/index.js";
import { settleSteps } from "../../src/bridge/translate/tool-call.js";

const modern: ClientContext = {
  era: "modern",
  protocolVersion: "2026-07-28",
  capabilities: { elicitation: { form: {} } },
  clientInfo: { name: "modern-test", version: "1" },
};
const legacy: ClientContext = {
  era: "legacy",
  protocolVersion: "2025-11-25",
  capabilities: { elicitation: {} },
  clientInfo: { name: "legacy-test", version: "1" },
};

function setup(options: { patterns?: string[]; ttlMs?: number; maxPending?: number } = {}) {
  const logged: string[] = [];
  let time = 1_000_000;
  const step = createConfirmToolStep({
    patterns: options.patterns ?? ["resolve_task", "send_*"],
    log: { info: (line) => logged.push(line) },
    now: () => time,
    ttlMs: options.ttlMs,
    maxPending: options.maxPending,
  });
  return {
    step,
    logged,
    advance: (ms: number) => {
      time += ms;
    },
    run: (params: ToolCallContext["params"], client: ClientContext = modern, extra: object = {}) =>
      Promise.resolve(step({ params, client, ...extra })),
  };
}

const sendParams = { name: "send_message", arguments: { chatId: "chat_1", message: "secret plan" } };

/** The input_required result's state and its one elicitation request. */
function asked(outcome: StepOutcome) {
  expect(outcome.kind).toBe("input_required");
  if (outcome.kind !== "input_required") throw new Error("not input_required");
  const result = outcome.result as {
    resultType: string;
    requestState: string;
    inputRequests: Record<string, { method: string; params: { mode: string; message: string } }>;
  };
  expect(result.resultType).toBe("input_required");
  expect(Object.keys(result.inputRequests)).toEqual([CONFIRM_INPUT_KEY]);
  const request = result.inputRequests[CONFIRM_INPUT_KEY];
  if (!request) throw new Error("no confirmation request");
  return { state: result.requestState, request };
}

/** The params a `forward` outcome sends on (it also carries the step's follower of the server's rounds). */
function forwarded(outcome: StepOutcome) {
  expect(outcome.kind).toBe("forward");
  if (outcome.kind !== "forward") throw new Error("not forwarded");
  return outcome.params;
}

/** The server's answer to a forwarded call, as the relay hands it to the step that follows the call's rounds. */
function serverAnswers(outcome: StepOutcome, result: Record<string, unknown>) {
  if (outcome.kind !== "forward" || !outcome.onResult) throw new Error("no follower of the server's rounds");
  outcome.onResult(result);
}

function errorText(outcome: StepOutcome): string {
  expect(outcome.kind).toBe("answer");
  if (outcome.kind !== "answer") throw new Error("not an answer");
  expect(outcome.result.isError).toBe(true);
  return (outcome.result.content as Array<{ text: string }>)[0]?.text ?? "";
}

const accept = { action: "accept", content: { approve: true } };

describe("a call no pattern matches", () => {
  it("passes untouched, with nothing asked or logged", async () => {
    const { run, logged } = setup();
    const params = { name: "list_chats", arguments: { topic: "x" }, requestState: "upstream" };
    const outcome = await run(params);
    expect(outcome).toEqual({ kind: "forward", params });
    expect(outcome.kind === "forward" && outcome.params).toBe(params);
    expect(logged).toEqual([]);
  });
});

describe("a matching call is asked about first", () => {
  it("answers input_required with one form-mode elicitation and an opaque bridge state", async () => {
    const { run, logged } = setup();
    const { state, request } = asked(await run(sendParams));
    expect(state.startsWith(CONFIRM_STATE_PREFIX)).toBe(true);
    expect(state.length).toBeGreaterThan(CONFIRM_STATE_PREFIX.length + 16);
    expect(request.method).toBe("elicitation/create");
    expect(request.params.mode).toBe("form");
    expect(request.params.message).toContain("It will send this message to the chat chat_1.");
    expect(logged).toEqual(["--confirm-tool: send_message: asked the person"]);
  });

  it("the dialog it asks shows invisible characters of every key and value (tag characters, zero-width ones)", async () => {
    const { run } = setup({ patterns: ["*"] });
    const tags = (text: string) =>
      String.fromCodePoint(...[...text].map((char) => 0xe0000 + char.charCodeAt(0)));
    const { request } = asked(
      await run({
        name: `send_message${tags("!")}`,
        arguments: {
          chatId: "chat_1",
          message: `Thanks, looks good!${tags("leak it")}`,
          [`note\u200b${tags("k")}`]: { [`in${tags("n")}`]: `x\u2060${tags("v")}` },
        },
      }),
    );
    const shown = JSON.stringify(request.params);
    expect(shown).not.toMatch(/[\p{Cf}\p{Default_Ignorable_Code_Point}]/u);
    expect(request.params.message).toContain('"Thanks, looks good!<U+E006C><U+E0065><U+E0061><U+E006B>');
    expect(request.params.message).toContain('- note<U+200B><U+E006B>: {"in<U+E006E>":"x<U+2060><U+E0076>"}');
  });

  it("a pattern matching several tools asks for each of them", async () => {
    const { run } = setup({ patterns: ["*_chat*"] });
    for (const name of ["create_chat", "list_chats", "get_chat"]) asked(await run({ name, arguments: {} }));
    expect((await run({ name: "send_message", arguments: {} })).kind).toBe("forward");
  });

  it("each call gets its own state", async () => {
    const { run } = setup();
    const first = asked(await run(sendParams)).state;
    const second = asked(await run(sendParams)).state;
    expect(first).not.toBe(second);
  });
});

describe.each([
  ["modern (the client's own retry)", modern],
  ["legacy (the face's re-run after elicitation/create)", legacy],
])("the retry, %s", (_era, client) => {
  it("accept with approve forwards the call as first made, the bridge's state and answer removed", async () => {
    const { run, logged } = setup();
    const { state } = asked(await run(sendParams, client));
    const outcome = await run(
      { ...sendParams, inputResponses: { [CONFIRM_INPUT_KEY]: accept }, requestState: state },
      client,
    );
    expect(forwarded(outcome)).toEqual(sendParams);
    expect(logged.at(-1)).toBe("--confirm-tool: send_message: approved by the person");
  });

  it.each([
    ["decline", { action: "decline" }],
    ["cancel", { action: "cancel" }],
    ["deny", { action: "deny" }],
    ["accept without approve", { action: "accept", content: { approve: false } }],
    ["accept with no content", { action: "accept" }],
    ["an unreadable answer", "yes"],
  ])("%s answers 'denied by the user' and sends nothing", async (_name, answer) => {
    const { run, logged } = setup();
    const { state } = asked(await run(sendParams, client));
    const outcome = await run(
      { ...sendParams, inputResponses: { [CONFIRM_INPUT_KEY]: answer }, requestState: state },
      client,
    );
    expect(errorText(outcome)).toContain('the call of "send_message" was denied by the user');
    expect(logged.at(-1)).toMatch(/^--confirm-tool: send_message: denied \(/);
  });
});

describe("the retry is bound to the call the person saw", () => {
  it("a state is used once: the second retry with it is refused", async () => {
    const { run } = setup();
    const { state } = asked(await run(sendParams));
    const retry = { ...sendParams, inputResponses: { [CONFIRM_INPUT_KEY]: accept }, requestState: state };
    expect((await run(retry)).kind).toBe("forward");
    expect(errorText(await run(retry))).toContain("unknown or has expired");
  });

  it("other arguments on the retry are refused (key order does not matter)", async () => {
    const { run } = setup();
    const { state } = asked(await run({ name: "send_message", arguments: { chatId: "c", message: "a" } }));
    const reordered = { name: "send_message", arguments: { message: "a", chatId: "c" } };
    const response = { inputResponses: { [CONFIRM_INPUT_KEY]: accept }, requestState: state };
    expect((await run({ ...reordered, ...response })).kind).toBe("forward");
    const second = asked(await run({ name: "send_message", arguments: { chatId: "c", message: "a" } }));
    const swapped = {
      name: "send_message",
      arguments: { chatId: "c", message: "b" },
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: second.state,
    };
    expect(errorText(await run(swapped))).toContain("is not the call the person was asked about");
  });

  it("a retry without the answer is asked again, still about the call as first made", async () => {
    const { run } = setup();
    const first = asked(await run(sendParams));
    const again = asked(await run({ ...sendParams, requestState: first.state }));
    expect(again.state).not.toBe(first.state);
    const outcome = await run({
      ...sendParams,
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: again.state,
    });
    expect(forwarded(outcome)).toEqual(sendParams);
  });

  it("an upstream server's own state and answers are kept aside and sent on approval", async () => {
    const { run } = setup({ patterns: ["resolve_task"] });
    const upstream = {
      name: "resolve_task",
      arguments: { chatId: "chat_1" },
      inputResponses: { server_question: { action: "accept", content: { names: "Neon" } } },
      requestState: "server-opaque-state",
    };
    const { state } = asked(await run(upstream));
    const outcome = await run({
      name: "resolve_task",
      arguments: { chatId: "chat_1" },
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: state,
      _meta: { progressToken: 7 },
    });
    expect(forwarded(outcome)).toEqual({ ...upstream, _meta: { progressToken: 7 } });
  });

  it("after approval, each round the server opens on the call continues it once, without a second question", async () => {
    const { run, logged } = setup({ patterns: ["resolve_task"], ttlMs: 60_000 });
    const call = { name: "resolve_task", arguments: { chatId: "chat_1" } };
    const { state } = asked(await run(call));
    const approved = await run({
      ...call,
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: state,
    });
    serverAnswers(approved, {
      resultType: "input_required",
      inputRequests: {},
      requestState: "server-state-1",
    });
    const answers = { server_question: { action: "accept", content: { task: "..." } } };
    const round1 = { ...call, inputResponses: answers, requestState: "server-state-1" };
    const continued = await run(round1);
    expect(forwarded(continued)).toEqual(round1);
    expect(logged.at(-1)).toBe(
      "--confirm-tool: resolve_task: continued (approved earlier; the server asked for more input)",
    );
    // The chain goes on with the state the server returned for this round, and ends with its final answer.
    serverAnswers(continued, {
      resultType: "input_required",
      inputRequests: {},
      requestState: "server-state-2",
    });
    const round2 = { ...call, inputResponses: answers, requestState: "server-state-2" };
    serverAnswers(await run(round2), { resultType: "complete", content: [] });
    // Each state is used once; the final answer opened no round.
    asked(await run(round1));
    asked(await run(round2));
  });

  it("a server round is bound to its call and its state: other arguments, another state or none are asked about", async () => {
    const { run } = setup({ patterns: ["resolve_task"] });
    const call = { name: "resolve_task", arguments: { chatId: "chat_1" } };
    const { state } = asked(await run(call));
    const approved = await run({
      ...call,
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: state,
    });
    serverAnswers(approved, {
      resultType: "input_required",
      inputRequests: {},
      requestState: "server-state-1",
    });
    const answers = { inputResponses: { q: { action: "accept" } } };
    asked(await run({ ...call, ...answers, requestState: "server-state-other" }));
    asked(
      await run({ ...call, arguments: { chatId: "chat_2" }, ...answers, requestState: "server-state-1" }),
    );
    asked(await run({ ...call, ...answers }));
    asked(await run(call));
    // Still open for the call it belongs to.
    expect(forwarded(await run({ ...call, ...answers, requestState: "server-state-1" })).requestState).toBe(
      "server-state-1",
    );
  });

  it("a round the server opened without a state continues once, with the client's answers", async () => {
    const { run } = setup({ patterns: ["resolve_task"] });
    const call = { name: "resolve_task", arguments: { chatId: "chat_1" } };
    const { state } = asked(await run(call));
    const approved = await run({
      ...call,
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: state,
    });
    serverAnswers(approved, { resultType: "input_required", inputRequests: {} });
    asked(await run(call));
    const retry = { ...call, inputResponses: { q: { action: "accept" } } };
    expect(forwarded(await run(retry))).toEqual(retry);
    asked(await run(retry));
  });

  it("a round expires with the confirmation's lifetime", async () => {
    const { run, advance } = setup({ patterns: ["resolve_task"], ttlMs: 60_000 });
    const call = { name: "resolve_task", arguments: { chatId: "chat_1" } };
    const { state } = asked(await run(call));
    const approved = await run({
      ...call,
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: state,
    });
    serverAnswers(approved, { resultType: "input_required", inputRequests: {}, requestState: "s1" });
    advance(60_001);
    asked(await run({ ...call, inputResponses: {}, requestState: "s1" }));
  });

  it("a denied call's server-state retry is asked about, never forwarded", async () => {
    const { run } = setup({ patterns: ["resolve_task"] });
    const call = { name: "resolve_task", arguments: { chatId: "chat_1" } };
    const { state } = asked(await run(call));
    await run({
      ...call,
      inputResponses: { [CONFIRM_INPUT_KEY]: { action: "decline" } },
      requestState: state,
    });
    asked(await run({ ...call, requestState: "server-state-1" }));
  });

  it("a forged state with the bridge's prefix is refused, never forwarded", async () => {
    const { run } = setup();
    const outcome = await run({
      ...sendParams,
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: `${CONFIRM_STATE_PREFIX}forged`,
    });
    expect(errorText(outcome)).toContain('the confirmation of "send_message" is unknown or has expired');
  });
});

describe("the state is bounded in time and count", () => {
  it("a confirmation past its lifetime is refused as expired", async () => {
    const { run, advance, logged } = setup({ ttlMs: 60_000 });
    const { state } = asked(await run(sendParams));
    advance(60_001);
    const outcome = await run({
      ...sendParams,
      inputResponses: { [CONFIRM_INPUT_KEY]: accept },
      requestState: state,
    });
    expect(errorText(outcome)).toContain("unknown or has expired (it lasts 1 min and is used once)");
    expect(logged.at(-1)).toBe("--confirm-tool: send_message: refused (unknown or expired confirmation)");
  });

  it("past maxPending the oldest confirmation is forgotten, the newest still works", async () => {
    const { run } = setup({ maxPending: 3 });
    const states: string[] = [];
    for (let i = 0; i < 4; i++) states.push(asked(await run(sendParams)).state);
    const retry = (state: string) =>
      run({ ...sendParams, inputResponses: { [CONFIRM_INPUT_KEY]: accept }, requestState: state });
    expect(errorText(await retry(states[0] ?? ""))).toContain("unknown or has expired");
    for (const state of states.slice(1)) expect((await retry(state)).kind).toBe("forward");
  });

  it("rounds the server opens are kept to the same bound: past it the oldest is asked about again", async () => {
    const { run } = setup({ maxPending: 3 });
    for (let i = 0; i < 5; i++) {
      const call = { name: "send_message", arguments: { chatId: "c", message: `m${i}` } };
      const { state } = asked(await run(call));
      const approved = await run({
        ...call,
        inputResponses: { [CONFIRM_INPUT_KEY]: accept },
        requestState: state,
      });
      serverAnswers(approved, { resultType: "input_required", requestState: "x".repeat(100_000) });
    }
    const retry = (i: number) =>
      run({
        name: "send_message",
        arguments: { chatId: "c", message: `m${i}` },
        inputResponses: {},
        requestState: "x".repeat(100_000),
      });
    asked(await retry(0));
    asked(await retry(1));
    for (const i of [2, 3, 4]) expect((await retry(i)).kind).toBe("forward");
  });

  it("hundreds of unanswered confirmations keep the map at its bound", async () => {
    const { run } = setup({ maxPending: 5 });
    const states: string[] = [];
    for (let i = 0; i < 500; i++) states.push(asked(await run(sendParams)).state);
    const retry = (state: string) =>
      run({ ...sendParams, inputResponses: { [CONFIRM_INPUT_KEY]: accept }, requestState: state });
    let forwarded = 0;
    for (const state of states) if ((await retry(state)).kind === "forward") forwarded++;
    expect(forwarded).toBe(5);
  });
});

describe("fail closed", () => {
  it.each([
    ["no elicitation capability", {}],
    ["URL-mode elicitation only", { elicitation: { url: {} } }],
    ["elicitation: null", { elicitation: null }],
  ])(
    "a client with %s is refused with a message naming the flag; nothing is asked",
    async (_name, capabilities) => {
      const { run, logged } = setup({ patterns: ["send_*"] });
      const outcome = await run(sendParams, {
        ...modern,
        capabilities: capabilities as ClientContext["capabilities"],
      });
      const text = errorText(outcome);
      expect(text).toContain('--confirm-tool "send_*"');
      expect(text).toContain("did not declare the elicitation capability");
      expect(text).toContain("not sent to the server");
      expect(logged).toEqual([
        "--confirm-tool: send_message: refused (the client cannot ask: no elicitation capability)",
      ]);
    },
  );

  it("through the steps, a modern client's local answers say resultType complete; a legacy client's never carry it", async () => {
    const { step } = setup();
    const modernAnswer = await runToolCallSteps([step], {
      params: sendParams,
      client: { ...modern, capabilities: {} },
    });
    const legacyAnswer = await runToolCallSteps([step], {
      params: sendParams,
      client: { ...legacy, capabilities: {} },
    });
    expect(modernAnswer.kind === "answer" && modernAnswer.result.resultType).toBe("complete");
    expect(legacyAnswer.kind === "answer" && "resultType" in legacyAnswer.result).toBe(false);
  });

  it("the step itself answers without resultType: the seam adds it, once, for every step", async () => {
    const { run } = setup();
    const direct = await run(sendParams, { ...modern, capabilities: {} });
    expect(direct.kind === "answer" && "resultType" in direct.result).toBe(false);
    const refuser: ToolCallStep = () => ({
      kind: "answer",
      result: { content: [{ type: "text", text: "no" }], isError: true },
    });
    const outcome = await runToolCallSteps([refuser], { params: sendParams, client: modern });
    expect(outcome).toEqual({
      kind: "answer",
      result: { content: [{ type: "text", text: "no" }], isError: true, resultType: "complete" },
    });
  });

  it("a notification-shaped call run through the steps (as the relay runs it) is dropped: nothing pending, nothing asked", async () => {
    const { step, logged } = setup();
    const asks: string[] = [];
    const outcome = await settleSteps(
      [step],
      { params: sendParams, client: legacy, notification: true },
      async (method) => {
        asks.push(method);
        throw new Error("a notification has no one to ask");
      },
      new AbortController().signal,
    );
    expect(outcome).toEqual({ kind: "drop" });
    expect(asks).toEqual([]);
    expect(logged).toEqual([
      "--confirm-tool: send_message: dropped (sent as a notification, which cannot be confirmed)",
    ]);
    expect(logged.join("\n")).not.toContain("asked");
  });

  it("runToolCallSteps hands notification on to every step", async () => {
    const seen: Array<boolean | undefined> = [];
    const spy: ToolCallStep = (call) => {
      seen.push(call.notification);
      return { kind: "forward", params: call.params };
    };
    await runToolCallSteps([spy, spy], { params: sendParams, client: legacy, notification: true });
    await runToolCallSteps([spy], { params: sendParams, client: legacy });
    expect(seen).toEqual([true, true, undefined]);
  });

  it("a call sent as a notification is dropped", async () => {
    const { run, logged } = setup();
    expect(await run(sendParams, legacy, { notification: true })).toEqual({ kind: "drop" });
    expect(logged).toEqual([
      "--confirm-tool: send_message: dropped (sent as a notification, which cannot be confirmed)",
    ]);
  });

  it("the log never holds argument values", async () => {
    const { run, logged } = setup();
    const { state } = asked(await run(sendParams));
    await run({ ...sendParams, inputResponses: { [CONFIRM_INPUT_KEY]: accept }, requestState: state });
    await run(sendParams, { ...modern, capabilities: {} });
    expect(logged.length).toBe(3);
    for (const line of logged) {
      expect(line).not.toContain("secret plan");
      expect(line).not.toContain("chat_1");
    }
  });
});
