/**
 * The floor under figure 4's `list --json`: the least a CLI that lists chats with fetch does, as cheaply as Node
 * allows (one CommonJS file, the platform's fetch): GET `${CHAT_API_URL}/v2/chats` with the API key and print the
 * body. No argument parsing, no validation, no retries. On Node 20 it keeps fetch's WebAssembly parser on its baseline
 * tier as chat-cli does (src/internal/short-lived-v8.ts), or the process would wait ~190 ms at exit for its tier-up.
 */
if (process.versions.node.startsWith("20.")) {
  void globalThis.Response;
  require("node:v8").setFlagsFromString("--liftoff-only");
}
fetch(new URL("/v2/chats", process.env.CHAT_API_URL), {
  headers: { authorization: `Bearer ${process.env.CHAT_API_KEY}`, accept: "application/json" },
})
  .then((answer) => answer.text())
  .then((text) => process.stdout.write(`${text}\n`));
