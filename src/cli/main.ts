/** Entry point of the `chat-cli` bin (placeholder until the CLI lands). */
process.stderr.write("chat-cli: not yet implemented\n");
process.exitCode = 1;
