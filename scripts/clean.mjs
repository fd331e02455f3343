// Removes build output (`node scripts/clean.mjs dist`): a portable `rm -rf` for npm scripts on every OS.
import { rmSync } from "node:fs";

for (const path of process.argv.slice(2)) rmSync(path, { recursive: true, force: true });
