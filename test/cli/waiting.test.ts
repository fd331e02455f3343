/** Waiting for the assistant (src/cli/context.ts): the spinner shows only to a person at a terminal, never in --json or a pipe. */
import { describe, expect, it } from "vitest";
import { type CliContext, waitForAssistant } from "../../src/cli/context.js";
import { recordingIo } from "./helpers.js";

function context(isTTY: boolean, json: boolean): { ctx: CliContext; spinners: string[] } {
  const spinners: string[] = [];
  const io = recordingIo({
    isTTY,
    spinner: (label) => {
      spinners.push(label);
      return { stop() {} };
    },
  });
  return {
    ctx: { io, globals: { baseUrl: "http://127.0.0.1:1", json, color: false, debug: false } },
    spinners,
  };
}

const wait = { label: "Waiting for the assistant…", checkCommand: "chat-cli list --limit 1" };

describe("the spinner while the assistant works", () => {
  it("shows on a terminal", async () => {
    const { ctx, spinners } = context(true, false);
    expect(await waitForAssistant(ctx, wait, async () => "reply")).toBe("reply");
    expect(spinners).toEqual(["Waiting for the assistant…"]);
  });

  it.each([
    ["--json on a terminal", true, true],
    ["stdout piped", false, false],
    ["--json piped", false, true],
  ])("shows nothing with %s", async (_case, isTTY, json) => {
    const { ctx, spinners } = context(isTTY, json);
    await waitForAssistant(ctx, wait, async () => "reply");
    expect(spinners).toEqual([]);
  });
});
