/** `--confirm-tool` on the command line (beside --ignore-tool, --read-only, --profile) and in doctor's checklist. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBridgeArgs } from "../../src/bridge/command/arguments.js";
import { type DoctorReport, diagnose, runDoctor } from "../../src/bridge/doctor/index.js";
import { toolsToConfirm } from "../../src/bridge/steps/confirm-tool.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../support/reference-request.js";

const quiet = () => undefined;
const argv = (...args: string[]) => ["node", "chat-mcp-bridge", ...args];
const URL_ARG = "https://chat.example.com/mcp";

describe("--confirm-tool on the command line", () => {
  it("is repeatable and sits beside --ignore-tool, --read-only and --profile", () => {
    const command = parseBridgeArgs(
      argv(
        "--confirm-tool",
        "resolve_task",
        "--ignore-tool",
        "create_*",
        "--confirm-tool",
        "send_*",
        "--read-only",
        "--profile",
        "acme",
        URL_ARG,
      ),
      {},
      quiet,
    );
    expect(command).toMatchObject({
      kind: "relay",
      options: {
        confirmTools: ["resolve_task", "send_*"],
        ignoreTools: ["create_*"],
        readOnly: true,
        profile: "acme",
      },
    });
  });

  it("defaults to no pattern, and doctor takes it too", () => {
    expect(parseBridgeArgs(argv(URL_ARG), {}, quiet).options).toMatchObject({ confirmTools: [] });
    expect(
      parseBridgeArgs(argv("doctor", "--confirm-tool", "resolve_task", URL_ARG), {}, quiet),
    ).toMatchObject({ kind: "doctor", options: { confirmTools: ["resolve_task"] } });
  });

  it("needs a pattern", () => {
    expect(() => parseBridgeArgs(argv(URL_ARG, "--confirm-tool"), {}, quiet)).toThrow();
  });
});

describe("toolsToConfirm: the --ignore-tool wildcard rules", () => {
  const tools = ["create_chat", "list_chats", "get_chat", "send_message", "resolve_task"];
  it("a pattern can match several tools", () => {
    expect(toolsToConfirm(["*_chat", "resolve_task", "delete_*"], tools)).toEqual([
      "create_chat",
      "get_chat",
      "resolve_task",
    ]);
  });
  it("matching is whole-name and case-sensitive; regex characters are literal", () => {
    expect(
      toolsToConfirm(["send", "Resolve_task", "list_chat.", "*"], ["send_message", "list_chats"]),
    ).toEqual(["send_message", "list_chats"]);
  });
});

describe("doctor lists what needs confirming", () => {
  let server: RequestableReferenceServer;
  beforeAll(() => {
    server = createRequestableReferenceServer({ testOnlyUnauthenticatedMcpAccount: "personal" });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function doctor(...flags: string[]): Promise<DoctorReport> {
    const command = parseBridgeArgs(
      argv("doctor", "--token-store", "file", ...flags, server.mcpUrl),
      {},
      quiet,
    );
    if (command.kind !== "doctor") throw new Error("not parsed as doctor");
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CHAT_CONFIG_DIR: "/nonexistent",
    };
    return diagnose(command.target, command.options, env, undefined, { fetch: server.fetch });
  }

  it("names the listed tools the patterns match, after --ignore-tool", async () => {
    const report = await doctor(
      "--confirm-tool",
      "resolve_task",
      "--confirm-tool",
      "*_message*",
      "--ignore-tool",
      "list_messages",
    );
    const confirm = report.checks.find((check) => check.id === "confirm");
    expect(report.checks.find((check) => check.id === "live")?.status).toBe("pass");
    expect(confirm).toEqual({
      id: "confirm",
      title: "Tools that need confirming",
      status: "pass",
      detail: "send_message, resolve_task (asked in the client's dialog before each call)",
    });
  });

  it("a pattern matching no listed tool fails the check, naming the tool meant; doctor exits 1 with ✗", async () => {
    const report = await doctor("--confirm-tool", "send-message", "--confirm-tool", "resolve_task");
    const confirm = report.checks.find((check) => check.id === "confirm");
    expect(confirm?.status).toBe("fail");
    expect(confirm?.detail).toBe(
      '--confirm-tool "send-message" matches no tool the server lists, so it asks about nothing: the tool meant runs without asking; did you mean send_message?',
    );
    expect(confirm?.fix).toContain("--confirm-tool send_message");
    expect(report.ok).toBe(false);

    let printed = "";
    const command = parseBridgeArgs(
      argv("doctor", "--token-store", "file", "--confirm-tool", "send-message", server.mcpUrl),
      {},
      quiet,
    );
    if (command.kind !== "doctor") throw new Error("not parsed as doctor");
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CHAT_CONFIG_DIR: "/nonexistent",
    };
    const code = await runDoctor(
      command.target,
      command.options,
      env,
      (text) => {
        printed += text;
      },
      { fetch: server.fetch },
    );
    expect(code).toBe(1);
    expect(printed).toContain('✗ Tools that need confirming: --confirm-tool "send-message" matches no tool');
    expect(printed).toContain("did you mean send_message?");
    expect(printed).not.toContain("All checks passed");
  });

  it("--ignore-tool: the hidden tools are listed; one matching no tool fails its check with the tool meant", async () => {
    const passing = await doctor("--ignore-tool", "create_*");
    expect(passing.checks.find((check) => check.id === "hidden-tools")).toEqual({
      id: "hidden-tools",
      title: "Tools hidden from the client",
      status: "pass",
      detail: "create_chat (calls of them are refused by the bridge)",
    });
    const failing = await doctor("--ignore-tool", "create-chat");
    const hidden = failing.checks.find((check) => check.id === "hidden-tools");
    expect(hidden?.status).toBe("fail");
    expect(hidden?.detail).toContain("did you mean create_chat?");
    expect(failing.ok).toBe(false);
  });

  it("without the flag there is no such check", async () => {
    const report = await doctor();
    expect(report.checks.find((check) => check.id === "confirm")).toBeUndefined();
  });
});
