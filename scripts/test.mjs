// `npm test`: runs vitest, inside a private D-Bus session with a real keyring on Linux when the machine has one.
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const extraArgs = process.argv.slice(2);
// Vitest colours whenever TERM is set, even into a file or a pipe; redirected output gets plain text.
const plain =
  !process.stdout.isTTY &&
  !("FORCE_COLOR" in process.env) &&
  !extraArgs.some((arg) => /^--(no-)?color$/.test(arg));
const vitest = [
  process.execPath,
  join(root, "node_modules/vitest/vitest.mjs"),
  "run",
  ...(plain ? ["--no-color"] : []),
  ...extraArgs,
];

/** True when `program` is on PATH. */
function onPath(program) {
  return (process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const withKeyring =
  process.platform === "linux" &&
  !process.env.CHAT_TEST_IN_KEYRING &&
  ["bash", "dbus-run-session", "gnome-keyring-daemon"].every(onPath);
const [command, ...args] = withKeyring ? ["bash", join(root, "scripts/with-keyring.sh"), ...vitest] : vitest;
const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
process.exit(result.status ?? 1);
