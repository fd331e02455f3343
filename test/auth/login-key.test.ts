/** Login keys: the default profile keeps the key logins always had; profiles and --resource get their own. */
import { describe, expect, it } from "vitest";
import { loginKey } from "../../src/auth/login-key.js";

const serverUrl = "https://mcp.example.com/mcp";

describe("login keys with profiles and resources", () => {
  it("keeps the key of existing logins without a profile, and with the default profile", () => {
    // Computed before profiles existed: an upgrade must find the logins people already have.
    expect(loginKey(serverUrl)).toBe("366f1eea13ad847fbc7b8ea4ea4c527e");
    expect(loginKey(serverUrl, ["X-Team"])).toBe("d30761c0abf0513f13596277fda8619d");
    expect(loginKey(serverUrl, [], { profile: "default" })).toBe(loginKey(serverUrl));
    expect(loginKey(serverUrl, [], { resource: serverUrl })).toBe(loginKey(serverUrl));
  });

  it("gives each profile and each other resource a login of its own", () => {
    const keys = new Set([
      loginKey(serverUrl),
      loginKey(serverUrl, [], { profile: "acme" }),
      loginKey(serverUrl, [], { profile: "personal" }),
      loginKey(serverUrl, [], { resource: "https://api.example.com/" }),
      loginKey(serverUrl, [], { profile: "acme", resource: "https://api.example.com/" }),
    ]);
    expect(keys.size).toBe(5);
    expect(loginKey(serverUrl, ["X-A"], { profile: "acme" })).toBe(
      loginKey(serverUrl, ["x-a"], { profile: "acme" }),
    );
  });
});
