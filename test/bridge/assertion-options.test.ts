/** The bridge's flags for a sign-in with an assertion: `--workload-token-file` and the `--idp-*` three, parsed and checked before anything starts. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseBridgeArgs, UsageError } from "../../src/bridge/command/arguments.js";
import { bridgeLoginCommand } from "../../src/bridge/sign-in/oauth.js";
import { scratchDir } from "../support/scratch-dir.js";

const argv = (...args: string[]) => ["node", "chat-mcp-bridge", ...args];
const quiet = () => {};
const url = "https://chat.example.com/mcp";
const dir = scratchDir("cmb-assertion-options-");
const tokenFile = join(dir, "token.jwt");
writeFileSync(tokenFile, "header.payload.signature");

describe("--workload-token-file", () => {
  it("takes the file with --client-id, for the relay and for login", () => {
    const relay = parseBridgeArgs(
      argv("--client-id", "wl", "--workload-token-file", tokenFile, url),
      {},
      quiet,
    );
    expect(relay.kind === "relay" && relay.options).toMatchObject({
      clientId: "wl",
      workloadTokenFile: tokenFile,
    });
    const login = parseBridgeArgs(
      argv("login", "--client-id", "wl", "--workload-token-file", tokenFile, url),
      {},
      quiet,
    );
    expect(login.kind === "login" && login.options).toMatchObject({ workloadTokenFile: tokenFile });
  });

  it.each([
    [["--workload-token-file", tokenFile, url], {}, "needs --client-id"],
    [
      ["--client-id", "wl", "--workload-token-file", join(dir, "gone.jwt"), url],
      {},
      "cannot be read (ENOENT)",
    ],
    [
      ["--client-id", "wl", "--client-credentials", "--workload-token-file", tokenFile, url],
      { CHAT_MCP_CLIENT_SECRET: "s3cret-value" },
      "choose one",
    ],
    [["--client-id", "wl", "--device-code", "--workload-token-file", tokenFile, url], {}, "choose one"],
    [
      ["--client-id", "wl", "--workload-token-file", tokenFile, "--idp-issuer", "https://idp.example", url],
      {},
      "choose one",
    ],
  ])("refuses %j", (args, env, message) => {
    expect(() => parseBridgeArgs(argv(...args), env, quiet)).toThrow(UsageError);
    expect(() => parseBridgeArgs(argv(...args), env, quiet)).toThrow(message);
  });
});

describe("--idp-issuer, --idp-client-id, --idp-id-token-file", () => {
  const idp = [
    "--idp-issuer",
    "https://idp.example",
    "--idp-client-id",
    "idp-app",
    "--idp-id-token-file",
    tokenFile,
  ];

  it("take the IdP client's secret from $CHAT_MCP_IDP_CLIENT_SECRET, never a flag", () => {
    const parsed = parseBridgeArgs(
      argv("--client-id", "xaa", ...idp, url),
      { CHAT_MCP_IDP_CLIENT_SECRET: "idp-s3cret" },
      quiet,
    );
    expect(parsed.kind === "relay" && parsed.options.enterpriseIdp).toEqual({
      issuer: "https://idp.example",
      clientId: "idp-app",
      idTokenFile: tokenFile,
      clientSecret: "idp-s3cret",
    });
  });

  it.each([
    [["--client-id", "xaa", "--idp-issuer", "https://idp.example", url], "together"],
    [[...idp, url], "needs --client-id"],
    [["--client-id", "xaa", ...idp.slice(0, 1), "http://idp.example", ...idp.slice(2), url], "https URL"],
  ])("refuses %j", (args, message) => {
    expect(() => parseBridgeArgs(argv(...args), {}, quiet)).toThrow(message);
  });

  it("take a loopback http IdP (local tests)", () => {
    const local = ["--idp-issuer", "http://127.0.0.1:4000/idp", ...idp.slice(2)];
    expect(() => parseBridgeArgs(argv("--client-id", "xaa", ...local, url), {}, quiet)).not.toThrow();
  });
});

describe("the login command the bridge suggests", () => {
  it("carries the assertion flags (file paths, never a token or secret)", () => {
    const parsed = parseBridgeArgs(
      argv("--client-id", "wl", "--workload-token-file", tokenFile, url),
      {},
      quiet,
    );
    if (parsed.kind !== "relay") throw new Error("expected the relay");
    expect(bridgeLoginCommand(parsed.options, {}, ["node", "chat-mcp-bridge"])).toBe(
      `chat-mcp-bridge login --client-id wl --workload-token-file ${tokenFile} ${url}`,
    );
  });
});
