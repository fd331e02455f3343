/** The loopback callback port a server's sign-ins prefer (src/auth/session/callback-port.ts). */
import { describe, expect, it } from "vitest";
import { derivedCallbackPort } from "../../../src/auth/session/index.js";

describe("derivedCallbackPort", () => {
  it("is the same for the same server URL, so a stored registration's redirect URI keeps matching", () => {
    expect(derivedCallbackPort("https://chat.example/mcp")).toBe(
      derivedCallbackPort("https://chat.example/mcp"),
    );
  });

  it("lies in 20000-29999 and differs between servers", () => {
    const ports = ["https://a.example/mcp", "https://b.example/mcp", "https://c.example/mcp"].map(
      derivedCallbackPort,
    );
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThanOrEqual(29_999);
    }
    expect(new Set(ports).size).toBe(3);
  });
});
