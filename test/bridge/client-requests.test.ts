/** The bridge's edge (src/bridge/relay/client-requests.ts): progress only for a request still waiting, and a late write named in the log. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { ClientRequests } from "../../src/bridge/relay/client-requests.js";

function edge() {
  const lines: string[] = [];
  const log = { info: (line: string) => lines.push(line), debug: () => {}, debugEnabled: false };
  return { requests: new ClientRequests(log), lines };
}

const call = (
  id: number,
  name: string,
  progressToken?: string | number,
  args: Record<string, unknown> = {},
) =>
  ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) },
  }) as JSONRPCMessage;
const progress = (progressToken: string | number, value: number) =>
  ({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken, progress: value },
  }) as JSONRPCMessage;
const cancel = (requestId: number) =>
  ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } }) as JSONRPCMessage;
const result = (id: number, structuredContent: Record<string, unknown>) =>
  ({ jsonrpc: "2.0", id, result: { content: [], structuredContent } }) as JSONRPCMessage;

describe("progress reaches the client only while its request waits", () => {
  it("passes progress for a waiting request, drops it once answered", () => {
    const { requests } = edge();
    requests.fromClient(call(1, "create_chat", "tok-1"));
    expect(requests.toClient(progress("tok-1", 1))).toBe(true);
    expect(requests.toClient(result(1, { id: "chat_1" }))).toBe(true);
    expect(requests.toClient(progress("tok-1", 2))).toBe(false);
  });

  it("drops progress for a cancelled request and for a token nobody sent", () => {
    const { requests } = edge();
    requests.fromClient(call(2, "send_message", 7));
    requests.fromClient(cancel(2));
    expect(requests.toClient(progress(7, 1))).toBe(false);
    expect(requests.toClient(progress("never-sent", 1))).toBe(false);
  });

  it("tells a numeric token from the same string", () => {
    const { requests } = edge();
    requests.fromClient(call(3, "create_chat", 5));
    expect(requests.toClient(progress("5", 1))).toBe(false);
    expect(requests.toClient(progress(5, 1))).toBe(true);
  });
});

describe("a write the client stopped waiting for", () => {
  it("is named in the log when its answer arrives after all, with the chat it created", () => {
    const { requests, lines } = edge();
    requests.fromClient(call(4, "create_chat", "t"));
    requests.fromClient(cancel(4));
    requests.toClient(result(4, { id: "chat_42" }));
    expect(lines).toEqual([
      expect.stringMatching(/create_chat #4 was cancelled/),
      expect.stringMatching(/create_chat #4 was answered after .*chat chat_42.*Look before/),
    ]);
  });

  it("is named in the log when the client cancels it: it may or may not have run, and where to look", () => {
    const { requests, lines } = edge();
    requests.fromClient(call(6, "send_message", "t", { chatId: "chat_7", message: "secret plans" }));
    requests.fromClient(cancel(6));
    expect(lines).toEqual([
      "send_message #6 (chat chat_7) was cancelled by the client before the server answered: the server was asked " +
        'to stop, but it may or may not have run. Look before running it again (list_messages with chatId "chat_7").',
    ]);
    requests.fromClient(call(7, "create_chat", undefined, { message: "secret plans", title: "private" }));
    requests.fromClient(cancel(7));
    expect(lines[1]).toMatch(/^create_chat #7 was cancelled .*may or may not have run.*\(list_chats\)\.$/);
    expect(lines.join("\n")).not.toMatch(/secret|private/);
  });

  it("names a chat id only as the server could have made it (no control characters, bounded)", () => {
    const { requests, lines } = edge();
    requests.fromClient(call(8, "resolve_task", "t", { chatId: `chat_1\u001b[2J${"x".repeat(500)}` }));
    requests.fromClient(cancel(8));
    expect(lines).toEqual([expect.stringMatching(/^resolve_task #8 was cancelled .*\(list_chats\)\.$/)]);
  });

  it("says nothing when the client cancels a read", () => {
    const { requests, lines } = edge();
    requests.fromClient(call(9, "list_chats", "t"));
    requests.fromClient(cancel(9));
    expect(lines).toEqual([]);
  });

  it("says nothing of an answer the client was still waiting for", () => {
    const { requests, lines } = edge();
    requests.fromClient(call(5, "send_message"));
    requests.toClient(result(5, { chatId: "chat_1" }));
    expect(lines).toEqual([]);
  });
});
