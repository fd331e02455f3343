import { describe, expect, it } from "vitest";
import { configDir, defaultBaseUrl, defaultMcpUrl, envApiKey } from "../../src/config/index.js";

describe("defaults from the environment", () => {
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

describe("the config folder on each platform, as gh places its own", () => {
  const none = () => false;
  it("Windows: %AppData%\\chat-mcp-bridge", () => {
    expect(
      configDir(
        { APPDATA: "C:\\Users\\me\\AppData\\Roaming" },
        { platform: "win32", home: "C:\\Users\\me", exists: none },
      ),
    ).toBe("C:\\Users\\me\\AppData\\Roaming\\chat-mcp-bridge");
    expect(configDir({}, { platform: "win32", home: "C:\\Users\\me", exists: none })).toBe(
      "C:\\Users\\me\\AppData\\Roaming\\chat-mcp-bridge",
    );
  });
  it("Windows: an earlier version's ~\\.config\\chat-mcp-bridge is still used while %AppData% has none (no login lost)", () => {
    const legacy = "C:\\Users\\me\\.config\\chat-mcp-bridge";
    const machine = { platform: "win32" as const, home: "C:\\Users\\me" };
    expect(configDir({}, { ...machine, exists: (path) => path === legacy })).toBe(legacy);
    expect(configDir({}, { ...machine, exists: () => true })).toBe(
      "C:\\Users\\me\\AppData\\Roaming\\chat-mcp-bridge",
    );
  });
  it("Windows: $XDG_CONFIG_HOME and $CHAT_CONFIG_DIR still win", () => {
    const machine = { platform: "win32" as const, home: "C:\\Users\\me", exists: none };
    expect(configDir({ XDG_CONFIG_HOME: "D:\\cfg" }, machine)).toBe("D:\\cfg\\chat-mcp-bridge");
    expect(configDir({ CHAT_CONFIG_DIR: "D:\\c" }, machine)).toBe("D:\\c");
  });
  it("macOS and Linux: ~/.config/chat-mcp-bridge (gh's choice on macOS too, not ~/Library)", () => {
    for (const platform of ["darwin", "linux"] as const)
      expect(configDir({}, { platform, home: "/Users/me", exists: none })).toBe(
        "/Users/me/.config/chat-mcp-bridge",
      );
  });
});
