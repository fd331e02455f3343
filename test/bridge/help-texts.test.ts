/** Issue 40: the bridge's help says which environment variables it reads, and each command lists only its own flags. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv, ROOT, runProcess } from "../cli/helpers.js";

const BRIDGE = join(ROOT, "bin/chat-mcp-bridge.js");
const help = async (...args: string[]): Promise<string> => {
  const result = await runProcess(process.execPath, [BRIDGE, ...args, "--help"], { env: cleanEnv() });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
};

describe("chat-mcp-bridge --help", () => {
  it("has an environment section", async () => {
    const text = await help();
    const section = text.slice(text.indexOf("Environment:"));
    expect(text).toContain("Environment:");
    for (const name of [
      "BROWSER",
      "HTTPS_PROXY",
      "NO_PROXY",
      "CHAT_CONFIG_DIR",
      "NODE_EXTRA_CA_CERTS",
      "CHAT_MCP_URL",
    ])
      expect(section).toContain(name);
  });
});

describe("each command's help lists the flags that do something there", () => {
  it("login --help: no relay-only flags", async () => {
    const text = await help("login");
    for (const flag of ["--ignore-tool", "--read-only", "--confirm-tool"]) expect(text).not.toContain(flag);
    expect(text).toContain("--no-browser");
  });

  it("logout --help: no sign-in or relay flags", async () => {
    const text = await help("logout");
    for (const flag of ["--callback-port", "--no-browser", "--auth-timeout", "--ignore-tool", "--read-only"])
      expect(text).not.toContain(flag);
    expect(text).toContain("--profile");
  });

  it("the relay's --help still lists them all", async () => {
    const text = await help();
    for (const flag of ["--ignore-tool", "--read-only", "--confirm-tool", "--callback-port", "--no-browser"])
      expect(text).toContain(flag);
  });
});
