/**
 * Setup file of the unit project: a test file that opens a port (a listening socket) fails at once. The unit project
 * runs in-process: the reference server's fetch handler (test/support/reference-request.ts), msw, or the bridge's
 * fetch-backed upstream; a test whose subject is the socket itself belongs to the integration project (test/projects.ts).
 * Nothing here calls the real listen: the unit project has no exception.
 */
import net from "node:net";
import { expect } from "vitest";

const patched = Symbol.for("chat-mcp-bridge.test.no-ports");
const state = globalThis as { [patched]?: { file: string } };

const file = (expect.getState().testPath ?? "").replace(/\\/g, "/").replace(/^.*?\/test\//, "test/");
if (!state[patched]) {
  const current = { file };
  state[patched] = current;
  net.Server.prototype.listen = function (this: net.Server) {
    throw new Error(
      `${current.file} opened a port, and unit test files open none: use the reference server in-process ` +
        "(test/support/reference-request.ts), msw, or the bridge's fetch-backed upstream; a test whose subject is " +
        "the socket belongs to the integration project (test/projects.ts)",
    );
  } as typeof net.Server.prototype.listen;
} else {
  state[patched].file = file;
}
