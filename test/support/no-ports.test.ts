/** The unit project's port guard (test/support/no-ports.ts): a listen fails at once, naming the file and where it belongs. */
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";

describe("a unit test file that opens a port", () => {
  it("fails at the listen, naming the file and the ways without a port", () => {
    const server = createServer();
    expect(() => server.listen(0, "127.0.0.1")).toThrow(
      /^test\/support\/no-ports\.test\.ts opened a port, and unit test files open none: use the reference server in-process/,
    );
    expect(server.listening).toBe(false);
  });
});
