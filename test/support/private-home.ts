/**
 * Setup file: each test file gets a home folder of its own (HOME, and on Windows USERPROFILE, APPDATA, LOCALAPPDATA;
 * the XDG config folder inside it), so neither the file nor the bins it spawns write to the person's
 * config folder, and test files running at once never share remembered eras, logs or logins.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { testCacheDir } from "../../scripts/node-release.mjs";

// Fetched test tools (Node 24 and 26) stay in the person's cache, found by path, not by the home folder.
process.env.CHAT_TEST_CACHE_DIR ??= testCacheDir();
const home = mkdtempSync(join(tmpdir(), "cmb-home-"));
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = join(home, ".config");
if (process.platform === "win32") {
  process.env.USERPROFILE = home;
  process.env.APPDATA = join(home, "AppData", "Roaming");
  process.env.LOCALAPPDATA = join(home, "AppData", "Local");
  mkdirSync(process.env.APPDATA, { recursive: true });
}
// Registered before the test file's own hooks, so it runs after them: what used the folder has stopped by then.
afterAll(() => {
  rmSync(home, { recursive: true, force: true, maxRetries: 3 });
});
