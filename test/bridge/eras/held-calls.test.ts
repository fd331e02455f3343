/** The calls a modern client's input_required leaves held in the bridge over a legacy session: answered on retry, bounded in time and count. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createBridgeLog } from "../../../src/bridge/log/log.js";
import { ModernClientOverLegacy } from "../../../src/bridge/translate/modern-client-over-legacy.js";

type Json = Record<string, unknown>;
const envelope = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "held-test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
};
const elicitParams = { message: "name?", requestedSchema: { type: "object", properties: {} } };

/** A translator over a fake legacy relay: what reaches the "server" and the "client" is recorded. */
function setup(limits: { heldCallTimeoutMs?: number; maxHeldCalls?: number } = {}) {
  const toServer: Json[] = [];
  const toClient: Json[] = [];
  let serverSide: (message: JSONRPCMessage) => void = () => undefined;
  const translator = new ModernClientOverLegacy(
    (send) => {
      serverSide = (message) => send(message);
      return {
        fromClient: (message) => {
          toServer.push(message as Json);
          const value = message as Json;
          if (value.method === "initialize")
            queueMicrotask(() =>
              send({
                jsonrpc: "2.0",
                id: value.id as string,
                result: {
                  protocolVersion: "2025-11-25",
                  capabilities: {},
                  serverInfo: { name: "s", version: "1" },
                },
              } as JSONRPCMessage),
            );
        },
        close: () => undefined,
      };
    },
    (message) => toClient.push(message as Json),
    createBridgeLog({ silent: true } as never),
    limits,
  );
  const call = (id: number, extra: Json = {}) =>
    translator.fromClient({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { _meta: envelope, name: "ask", arguments: {}, ...extra },
    } as JSONRPCMessage);
  const upstreamCall = async () => {
    await settled(() => expect(toServer.some((m) => m.method === "tools/call")).toBe(true));
    return toServer.filter((m) => m.method === "tools/call").at(-1) as Json;
  };
  return {
    translator,
    toServer,
    toClient,
    call,
    upstreamCall,
    server: (m: Json) => serverSide(m as JSONRPCMessage),
  };
}

/** Waits for what the translator does in its next turns, looking every 2 ms rather than vi.waitFor's 50. */
function settled(check: () => void): Promise<void> {
  return vi.waitFor(check, { interval: 2 });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("a legacy server's mid-call request, for a modern client", () => {
  it("becomes input_required; the retry's inputResponses answer the server and the result answers the retry", async () => {
    const { toServer, toClient, call, upstreamCall, server } = setup();
    call(1);
    const upstream = await upstreamCall();
    expect(upstream.id).not.toBe(1);
    expect((upstream.params as Json)._meta).toBeUndefined();
    server({ jsonrpc: "2.0", id: 77, method: "elicitation/create", params: elicitParams });
    const first = toClient.find((m) => m.id === 1)?.result as Json;
    expect(first.resultType).toBe("input_required");
    const [key, request] = Object.entries(first.inputRequests as Json)[0]!;
    expect(request).toEqual({ method: "elicitation/create", params: elicitParams });
    call(2, {
      inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } },
      requestState: first.requestState,
    });
    await settled(() =>
      expect(toServer.at(-1)).toEqual({
        jsonrpc: "2.0",
        id: 77,
        result: { action: "accept", content: { name: "Ada" } },
      }),
    );
    server({ jsonrpc: "2.0", id: upstream.id, result: { content: [{ type: "text", text: "hi Ada" }] } });
    expect(toClient.find((m) => m.id === 2)?.result).toMatchObject({
      resultType: "complete",
      content: [{ text: "hi Ada" }],
    });
    expect(toClient.filter((m) => m.id === 1)).toHaveLength(1);
  });

  it("refuses a retry whose requestState it does not hold", async () => {
    const { toClient, call } = setup();
    call(3, { inputResponses: {}, requestState: "chat-mcp-bridge/forged" });
    await settled(() => expect(toClient.find((m) => m.id === 3)).toBeDefined());
    expect(toClient.find((m) => m.id === 3)?.error).toMatchObject({ code: -32602 });
  });

  it("gives up a call whose client never retries: the server's request refused, its call cancelled", async () => {
    const { toServer, toClient, call, upstreamCall, server } = setup({ heldCallTimeoutMs: 50 });
    call(4);
    const upstream = await upstreamCall();
    server({ jsonrpc: "2.0", id: 78, method: "elicitation/create", params: elicitParams });
    const state = (toClient.find((m) => m.id === 4)?.result as Json | undefined)?.requestState;
    await settled(() =>
      expect(toServer.find((m) => m.method === "notifications/cancelled")).toMatchObject({
        params: { requestId: upstream.id },
      }),
    );
    expect(toServer.find((m) => m.id === 78 && "error" in m)).toBeDefined();
    call(5, { inputResponses: {}, requestState: state });
    await settled(() => expect(toClient.find((m) => m.id === 5)?.error).toMatchObject({ code: -32602 }));
  });

  it("refuses the server's request when the count of held calls is reached", async () => {
    const { toServer, toClient, call, upstreamCall, server } = setup({ maxHeldCalls: 1 });
    call(6);
    await upstreamCall();
    server({ jsonrpc: "2.0", id: 80, method: "elicitation/create", params: elicitParams });
    call(7);
    await settled(() => expect(toServer.filter((m) => m.method === "tools/call")).toHaveLength(2));
    server({ jsonrpc: "2.0", id: 81, method: "elicitation/create", params: elicitParams });
    expect(toServer.find((m) => m.id === 81)?.error).toMatchObject({ code: -32601 });
    expect(toClient.find((m) => m.id === 7)).toBeUndefined();
  });

  it("refuses a server request a client does not answer (not elicitation, sampling or roots)", async () => {
    const { toServer, call, upstreamCall, server } = setup();
    call(8);
    await upstreamCall();
    server({ jsonrpc: "2.0", id: 82, method: "tasks/get", params: {} });
    expect(toServer.find((m) => m.id === 82)?.error).toMatchObject({ code: -32601 });
  });
});
