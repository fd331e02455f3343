/** Entry point of the `chat-cli` bin: `-V` answers at once; everything else loads the program and runs it. */
import { packageVersion } from "./version.js";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "-V" || argv[0] === "--version")) {
  process.stdout.write(`${packageVersion()}\n`);
} else {
  const { run } = await import("./run.js");
  process.exitCode = await run(argv);
}
