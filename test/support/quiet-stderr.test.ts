/** The test run's stderr filter: the browser sign-in notice goes, everything else passes unchanged. */
import { describe, expect, it } from "vitest";
import { quietStderrWrite } from "./quiet-stderr.js";

describe("quietStderrWrite", () => {
  it("drops the notice and its URL line, keeps the rest (also an indented line that follows anything else)", () => {
    const seen: string[] = [];
    const write = quietStderrWrite((chunk) => {
      seen.push(String(chunk));
      return true;
    });
    write("Opening your browser to sign in at 127.0.0.1:1. If it does not open, visit this URL:\n");
    write("  http://127.0.0.1:1/authorize?x=1\n");
    write(
      "Opening the sign-in URL (127.0.0.1:1) with the $BROWSER command. If the sign-in does not go on, visit this URL:\n",
    );
    write("  http://127.0.0.1:1/authorize?x=2\n");
    write("Open this URL to sign in at 127.0.0.1:1: http://127.0.0.1:1/authorize\n");
    write("real warning\n");
    write("  indented detail\n");
    expect(seen).toEqual(["real warning\n", "  indented detail\n"]);
  });
});
