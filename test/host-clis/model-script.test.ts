/** The scripted model's moves: tools found by suffix, results read through each host's wrapper, sign-in first. */
import { describe, expect, it } from "vitest";
import { nextMove, SEED_PROMPT, toolNamed } from "./model-script.js";

const chat = { id: "chat_1", object: "chat", title: "Set up a database for my app", hostProjectId: "prj_1" };
const offered = ["read_file", "mcp__chat__create_chat", "mcp__chat__list_messages", "mcp__chat__get_chat"];

describe("the scripted model", () => {
  it("finds a bridge tool under each host's prefix, never a longer name with the same end", () => {
    expect(toolNamed(["mcp__chat__create_chat"], "create_chat")).toBe("mcp__chat__create_chat");
    expect(toolNamed(["chat_create_chat"], "create_chat")).toBe("chat_create_chat");
    expect(toolNamed(["chat-create_chat"], "create_chat")).toBe("chat-create_chat");
    expect(toolNamed(["mcp_chat_create_chat"], "create_chat")).toBe("mcp_chat_create_chat");
    expect(toolNamed(["recreate_chat", "mcp__chat__recreate_chat"], "create_chat")).toBeUndefined();
    // Qwen Code's own agent-messaging tool.
    expect(toolNamed(["send_message"], "send_message")).toBeUndefined();
  });

  it("starts the seed flow with create_chat, then reads the chat id through Gemini CLI's wrapper", () => {
    expect(nextMove("seed", offered, [])).toEqual({
      kind: "call",
      name: "mcp__chat__create_chat",
      args: { message: SEED_PROMPT },
    });
    const wrapped = JSON.stringify({
      output: `<untrusted_context>\n${JSON.stringify(chat)}\n</untrusted_context>`,
    });
    const created = [{ name: "mcp__chat__create_chat", args: {}, result: wrapped }];
    expect(nextMove("seed", offered, created)).toEqual({
      kind: "call",
      name: "mcp__chat__list_messages",
      args: { chatId: "chat_1", limit: 5 },
    });
  });

  it("reads the chat id from Copilot CLI's text, prose and structuredContent side by side", () => {
    const text = `${JSON.stringify(chat)}Chat chat_1 created. Call list_messages {"x": "}"}.\n\n${JSON.stringify(chat)}`;
    const move = nextMove("seed", offered, [{ name: "mcp__chat__create_chat", args: {}, result: text }]);
    expect(move).toMatchObject({ kind: "call", args: { chatId: "chat_1" } });
  });

  it("quotes a failed result to the user instead of going on", () => {
    const failed = [
      { name: "mcp__chat__create_chat", args: {}, result: '{"isError":true,"content":"Sign in at X"}' },
    ];
    const move = nextMove("seed", offered, failed);
    expect(move.kind === "answer" && move.text).toMatch(/create_chat failed: .*Sign in at X/);
  });

  it("offered only the bridge's error tool, calls it and reports its text", () => {
    const offeredError = ["Bash", "mcp__chat__chat_mcp_bridge_error"];
    expect(nextMove("list", offeredError, [])).toMatchObject({ name: "mcp__chat__chat_mcp_bridge_error" });
    const said = [{ name: offeredError[1] as string, args: {}, result: "unknown option --token-stor" }];
    expect(nextMove("list", offeredError, said)).toMatchObject({
      text: expect.stringContaining("--token-stor"),
    });
  });

  it("offered only sign_in, calls it, then reports its text", () => {
    expect(nextMove("list", ["Bash", "chat_sign_in"], [])).toEqual({
      kind: "call",
      name: "chat_sign_in",
      args: {},
    });
    const signedIn = [
      { name: "chat_sign_in", args: {}, result: "Open http://127.0.0.1:1/device and enter ABCD-EFGH" },
    ];
    const move = nextMove("list", ["Bash", "chat_sign_in"], signedIn);
    expect(move.kind === "answer" && move.text).toContain("ABCD-EFGH");
  });
});
