/**
 * Setup file: keeps the sign-in flow's "Opening your browser" notice (and the URL line after it) off the run's
 * stderr; the tests that check the notice spy on process.stderr.write and still see it. CHAT_TEST_VERBOSE=1 keeps all.
 */
import { quietStderrWrite } from "./quiet-stderr.js";

// Once per process: the unit project's files share a worker's process and run this setup file each.
const quieted = Symbol.for("chat-mcp-bridge.test.quiet-stderr");
const stderr = process.stderr as typeof process.stderr & { [quieted]?: true };
if (process.env.CHAT_TEST_VERBOSE !== "1" && !stderr[quieted]) {
  stderr[quieted] = true;
  process.stderr.write = quietStderrWrite(
    process.stderr.write.bind(process.stderr),
  ) as typeof process.stderr.write;
}
