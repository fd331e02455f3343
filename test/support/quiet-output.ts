/**
 * Setup file: keeps the sign-in flow's "Opening your browser" notice (and the URL line after it) off the run's
 * stderr; the tests that check the notice spy on process.stderr.write and still see it. CHAT_TEST_VERBOSE=1 keeps all.
 */
import { quietStderrWrite } from "./quiet-stderr.js";

if (process.env.CHAT_TEST_VERBOSE !== "1") {
  process.stderr.write = quietStderrWrite(
    process.stderr.write.bind(process.stderr),
  ) as typeof process.stderr.write;
}
