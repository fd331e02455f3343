/** Entry point of the `chat-cli` bin (after bin/chat-cli.js turns on the compile cache): `-V` answers at once; everything else loads the program and runs it. */

/** The package version, written in by the bundler (scripts/bundle.mjs); unset when run from source. */
declare const CHAT_CLI_BUNDLED_VERSION: string | undefined;

async function main(argv: string[]): Promise<void> {
  // `-V` alone is answered before commander and the program load: scripts ask it often, and it needs neither.
  if (argv.length === 1 && (argv[0] === "-V" || argv[0] === "--version")) {
    const version =
      typeof CHAT_CLI_BUNDLED_VERSION === "string"
        ? CHAT_CLI_BUNDLED_VERSION
        : (await import("../internal/package-version.js")).packageVersion();
    process.stdout.write(`${version}\n`);
    return;
  }
  const { run } = await import("./run.js");
  process.exitCode = await run(argv);
  // The command is done: end now, whatever handle is still open (an idle keep-alive connection, a timer), once what
  // was written to stdout and stderr has been flushed.
  const flushed = (stream: NodeJS.WriteStream) => new Promise((resolve) => stream.write("", resolve));
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit();
}

// No top-level await: the bundle is CommonJS (scripts/bundle.mjs). A failure ends the process as an unhandled rejection.
void main(process.argv.slice(2));
