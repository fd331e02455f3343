/**
 * The floor under figure 4's `list --json`: the least a CLI that lists chats with fetch does, as cheaply as Node
 * allows (one CommonJS file, the platform's fetch): GET `${CHAT_API_URL}/v2/chats` with the API key and print the
 * body. No argument parsing, no validation, no retries.
 */
fetch(new URL("/v2/chats", process.env.CHAT_API_URL), {
  headers: { authorization: `Bearer ${process.env.CHAT_API_KEY}`, accept: "application/json" },
})
  .then((answer) => answer.text())
  .then((text) => process.stdout.write(`${text}\n`));
