/** The `login` command the bridge tells a person to run carries every flag that decides where and how the login is made, never a secret. */
import { describe, expect, it } from "vitest";
import { parseBridgeArgs } from "../../src/bridge/command/arguments.js";
import { bridgeLoginCommand } from "../../src/bridge/sign-in/oauth.js";

const URL_ARG = "https://chat.example.com/mcp";
const loginFor = (...args: string[]): string => {
  const command = parseBridgeArgs(["node", "chat-mcp-bridge", ...args, URL_ARG], {}, () => {});
  if (command.kind !== "relay") throw new Error("not the relay");
  return bridgeLoginCommand(command.options, {}, ["node", "chat-mcp-bridge"]);
};

describe("the login command the relay suggests", () => {
  it("keeps the token store and the profile: the login lands where the relay reads it", () => {
    expect(loginFor("--token-store", "file", "--profile", "work")).toBe(
      `chat-mcp-bridge login --profile work --token-store file ${URL_ARG}`,
    );
  });

  it("leaves the default token store (auto) unsaid", () => {
    expect(loginFor("--token-store", "auto")).toBe(`chat-mcp-bridge login ${URL_ARG}`);
  });

  it("keeps the client and the redirect URI: a pre-registered client id, callback port, host and path", () => {
    expect(
      loginFor(
        "--client-id",
        "my-app",
        "--callback-port",
        "33418",
        "--host",
        "localhost",
        "--callback-path",
        "/oauth/cb",
      ),
    ).toBe(
      `chat-mcp-bridge login --client-id my-app --callback-port 33418 --host localhost --callback-path /oauth/cb ${URL_ARG}`,
    );
  });

  it("keeps what changes the sign-in's requests: resource, no resource parameter, authorize params", () => {
    expect(
      loginFor(
        "--resource",
        "https://chat.example.com/",
        "--disable-resource-parameter",
        "--authorize-param",
        "prompt=consent",
      ),
    ).toBe(
      `chat-mcp-bridge login --resource https://chat.example.com/ --disable-resource-parameter --authorize-param prompt=consent ${URL_ARG}`,
    );
  });

  it("never carries the client secret, which stays in the environment", () => {
    const command = parseBridgeArgs(
      ["node", "chat-mcp-bridge", "--client-id", "my-app", URL_ARG],
      { CHAT_MCP_CLIENT_SECRET: "s3cret-value" },
      () => {},
    );
    if (command.kind !== "relay") throw new Error("not the relay");
    expect(bridgeLoginCommand(command.options, {}, ["node", "chat-mcp-bridge"])).not.toContain("s3cret");
  });
});
