/** A client's cancellation of a call still waiting (for the legacy session to open, for the bridge's steps): the call is never sent. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { createBridgeLog } from "../../../src/bridge/log/log.js";
import type { ToolCallStep } from "../../../src/bridge/steps/index.js";
import { ModernClientOverLegacy } from "../../../src/bridge/translate/modern-client-over-legacy.js";
import { legacySessionRelay, MODERN_ENVELOPE } from "../fixtures/in-process-relays.js";

type Json = Record<string, unknown>;
const envelope = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "cancel-test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A translator over a fake legacy relay whose `initialize` is answered only when the test says so. */
function setup() {
  const toServer: Json[] = [];
  const toClient: Json[] = [];
  let answerInitialize: () => void = () => {};
  let initializeWasSent: () => void = () => {};
  const initializeSent = new Promise<void>((resolve) => {
    initializeWasSent = resolve;
  });
  const translator = new ModernClientOverLegacy(
    (send) => ({
      fromClient: (message) => {
        toServer.push(message as Json);
        const value = message as Json;
        // The server answers every call at once: an answer to a call the client cancelled would reach it.
        if (value.method === "tools/call")
          queueMicrotask(() =>
            send({ jsonrpc: "2.0", id: value.id as string, result: { content: [] } } as JSONRPCMessage),
          );
        if (value.method !== "initialize") return;
        answerInitialize = () =>
          send({
            jsonrpc: "2.0",
            id: value.id as string,
            result: {
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "s", version: "1" },
            },
          } as JSONRPCMessage);
        initializeWasSent();
      },
      close: () => undefined,
    }),
    (message) => toClient.push(message as Json),
    createBridgeLog({ silent: true } as never),
  );
  const call = (id: number) =>
    translator.fromClient({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { _meta: envelope, name: "create_chat", arguments: { message: "hi" } },
    } as JSONRPCMessage);
  const cancel = (id: number) =>
    translator.fromClient({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "the person stopped it" },
    } as JSONRPCMessage);
  /** Lets the translator finish what the session's opening set going (turns of the event loop, no clock). */
  const turns = async () => {
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    toServer,
    toClient,
    call,
    cancel,
    initializeSent,
    answerInitialize: () => answerInitialize(),
    turns,
  };
}

describe("a call cancelled while the legacy session opens", () => {
  it("is never sent to the server, and the client gets no answer for it", async () => {
    const { toServer, toClient, call, cancel, initializeSent, answerInitialize, turns } = setup();
    call(1);
    await initializeSent;
    cancel(1);
    answerInitialize();
    await turns();
    expect(toServer.filter((message) => message.method === "tools/call")).toEqual([]);
    // Nor is the cancellation sent on: the server never heard of the call.
    expect(toServer.filter((message) => message.method === "notifications/cancelled")).toEqual([]);
    expect(toClient.filter((message) => message.id === 1)).toEqual([]);
  });

  it("a call not cancelled beside it is sent and answered", async () => {
    const { toServer, toClient, call, cancel, initializeSent, answerInitialize, turns } = setup();
    call(1);
    call(2);
    await initializeSent;
    cancel(1);
    answerInitialize();
    await turns();
    expect(toServer.filter((message) => message.method === "tools/call")).toHaveLength(1);
    expect(toClient.filter((message) => message.id === 2)).toHaveLength(1);
    expect(toClient.filter((message) => message.id === 1)).toEqual([]);
  });
});

/** A step that holds each call until `decide()`; `judged()` resolves once the step holds the next call. */
function holdingStep() {
  let decide: () => void = () => {};
  let judging: () => void = () => {};
  let next = new Promise<void>((resolve) => {
    judging = resolve;
  });
  const steps: ToolCallStep[] = [
    async ({ params }) => {
      judging();
      await new Promise<void>((resolve) => {
        decide = resolve;
      });
      return { kind: "forward", params };
    },
  ];
  return {
    steps,
    judged: async () => {
      await next;
      next = new Promise<void>((resolve) => {
        judging = resolve;
      });
    },
    decide: () => decide(),
  };
}

const cancelled = (requestId: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/cancelled",
  params: { requestId, reason: "the person stopped it" },
});
const eventLoopTurns = async () => {
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
};

describe("a call cancelled while the bridge's own steps judge it (a question to the person, say)", () => {
  it("is never sent to the server, and the client gets no answer for it", async () => {
    const step = holdingStep();
    const { translated, sent, modern } = legacySessionRelay({ steps: step.steps });
    modern.send({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { _meta: MODERN_ENVELOPE, name: "create_chat", arguments: { message: "hi" } },
    });
    await step.judged();
    modern.send(cancelled(7));
    step.decide();
    await eventLoopTurns();
    expect(sent.filter((message) => "method" in message && message.method === "tools/call")).toEqual([]);
    expect(modern.toClient.filter((message) => message.id === 7)).toEqual([]);
    await translated.close(100);
  });

  it("from a 2025 client too: never sent, never answered, and the next call goes on", async () => {
    const step = holdingStep();
    const { relay, sent, legacy } = legacySessionRelay({ steps: step.steps });
    const calls = () => sent.filter((message) => "method" in message && message.method === "tools/call");
    const call = (id: number) =>
      legacy.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "create_chat", arguments: {} },
      });
    call(7);
    await step.judged();
    legacy.send(cancelled(7));
    step.decide();
    await eventLoopTurns();
    expect(calls()).toEqual([]);
    expect(legacy.toClient.filter((message) => message.id === 7)).toEqual([]);

    call(8);
    await step.judged();
    step.decide();
    await eventLoopTurns();
    expect(calls()).toHaveLength(1);
    expect(legacy.toClient.filter((message) => message.id === 8)).toHaveLength(1);
    await relay.close(100);
  });
});
