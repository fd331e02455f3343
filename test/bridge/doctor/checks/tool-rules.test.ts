/** doctor's checks of the tool rules on a listed answer: a rule that matches no tool fails, with the tool meant or what to do. */
import { describe, expect, it } from "vitest";
import type { DoctorContext } from "../../../../src/bridge/doctor/check.js";
import { confirmCheck, hiddenToolsCheck } from "../../../../src/bridge/doctor/live.js";

const LISTED = {
  tools: [
    { name: "create_chat", annotations: { readOnlyHint: false } },
    { name: "send_message" },
    { name: "get_chat", annotations: { readOnlyHint: true } },
  ],
};
const WRITERS_ONLY = { tools: [{ name: "create_chat" }, { name: "send_message" }] };

const run = (check: typeof confirmCheck, options: DoctorContext["options"], listed: unknown = LISTED) =>
  check.run({ options, listed } as DoctorContext, new AbortController().signal);

describe("the hidden-tools check", () => {
  it("--read-only on a server that marks no tool read-only fails: every tool would be hidden", async () => {
    const result = await run(hiddenToolsCheck, { readOnly: true } as DoctorContext["options"], WRITERS_ONLY);
    expect(result.status).toBe("fail");
    expect(result.detail).toContain(
      "--read-only: the server annotates no tool readOnlyHint: true, so every tool is hidden",
    );
    expect(result.fix).toContain("leave out --read-only");
  });

  it("--read-only with a read-only tool passes, naming what it hides", async () => {
    const result = await run(hiddenToolsCheck, { readOnly: true } as DoctorContext["options"]);
    expect(result).toEqual({
      status: "pass",
      detail: "create_chat, send_message (calls of them are refused by the bridge)",
    });
  });

  it("every unmatched rule is named, those near a tool with it", async () => {
    const result = await run(hiddenToolsCheck, {
      ignoreTools: ["creat_chat", "delete_*"],
      readOnly: false,
    } as DoctorContext["options"]);
    expect(result.status).toBe("fail");
    expect(result.detail).toContain(
      '--ignore-tool "creat_chat" matches no tool the server lists, so it hides nothing; did you mean create_chat?',
    );
    expect(result.detail).toContain(
      '--ignore-tool "delete_*" matches no tool the server lists, so it hides nothing; the server lists create_chat, send_message, get_chat',
    );
    expect(result.fix).toContain("--ignore-tool create_chat");
  });
});

describe("the confirm check", () => {
  it("a pattern matching nothing fails even beside one that matches", async () => {
    const result = await run(confirmCheck, {
      confirmTools: ["send_mesage", "create_*"],
    } as DoctorContext["options"]);
    expect(result.status).toBe("fail");
    expect(result.detail).toContain("did you mean send_message?");
  });

  it("without a tools/list answer it is not checked", async () => {
    const result = await run(confirmCheck, { confirmTools: ["x"] } as DoctorContext["options"], null);
    expect(result.status).toBe("skip");
  });
});
