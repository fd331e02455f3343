/**
 * Setup file: each test file gets a home folder of its own (HOME, and on Windows USERPROFILE, APPDATA, LOCALAPPDATA;
 * the XDG config folder inside it), so neither the file nor the bins it spawns write to the person's
 * config folder, and test files running at once never share remembered eras, logs or logins.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll } from "vitest";
import { testCacheDir } from "../../scripts/node-release.mjs";
import { removeScratchDirs, scratchDir } from "./scratch-dir.js";

// Fetched test tools (Node binaries of other release lines) stay in the person's cache, found by path, not by the home folder.
process.env.CHAT_TEST_CACHE_DIR ??= testCacheDir();
// Registered by this setup file before the test file's own hooks, so it runs after them (after hooks run in stack order).
afterAll(removeScratchDirs);
// A scratch folder: removed after the test file's own hooks, when what used it has stopped.
const home = scratchDir("cmb-home-");
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = join(home, ".config");
if (process.platform === "win32") {
  process.env.USERPROFILE = home;
  process.env.APPDATA = join(home, "AppData", "Roaming");
  process.env.LOCALAPPDATA = join(home, "AppData", "Local");
  mkdirSync(process.env.APPDATA, { recursive: true });
}
