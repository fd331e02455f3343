/**
 * Before every run: gives it a private temp folder; after it, lists and removes what tests left there
 * (test/support/leftovers). The integration project's own setup (test/integration-setup.ts) builds and fetches.
 */
import { checkLeftovers, usePrivateTempDir } from "./support/leftovers.js";

export default function setup(): () => void {
  const systemTemp = process.env.TMPDIR;
  const dir = usePrivateTempDir();
  return () => {
    if (systemTemp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = systemTemp;
    const clean = checkLeftovers(dir, {
      strict: process.env.CHAT_TEST_STRICT === "1",
      write: (text) => process.stdout.write(text),
    });
    if (!clean) process.exitCode = 1;
  };
}
