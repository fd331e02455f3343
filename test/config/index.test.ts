import { describe, expect, it } from "vitest";
import { configDir, defaultBaseUrl, defaultMcpUrl, envApiKey } from "../../src/config/index.js";

describe("defaults from the environment (CONTRACT §1)", () => {
  it("base URL is $CHAT_API_URL else the local reference server", () => {
    expect(defaultBaseUrl({})).toBe("http://127.0.0.1:8787");
    expect(defaultBaseUrl({ CHAT_API_URL: "https://chat.example/" })).toBe("https://chat.example");
  });
  it("MCP URL is $CHAT_MCP_URL else <base>/mcp", () => {
    expect(defaultMcpUrl({ CHAT_API_URL: "http://h:1" })).toBe("http://h:1/mcp");
    expect(defaultMcpUrl({ CHAT_MCP_URL: "https://m/mcp" })).toBe("https://m/mcp");
  });
  it("API key comes only from $CHAT_API_KEY", () => {
    expect(envApiKey({})).toBeUndefined();
    expect(envApiKey({ CHAT_API_KEY: " k " })).toBe("k");
  });
  it("config dir is $CHAT_CONFIG_DIR, else XDG, else ~/.config", () => {
    expect(configDir({ CHAT_CONFIG_DIR: "/x" })).toBe("/x");
    expect(configDir({ XDG_CONFIG_HOME: "/xdg" })).toBe("/xdg/chat-mcp-bridge");
    expect(configDir({})).toMatch(/\.config\/chat-mcp-bridge$/);
  });
});
