/** `chat-cli login --with-token`: the API key (or access token) read from stdin and stored as the login for this base URL. */
import { configDir } from "../../config/index.js";
import { redactForTerminal, rememberSecret } from "../../internal/redact.js";
import { UsageError } from "../../internal/usage-error.js";
import { assertBaseUrl, type CliContext } from "../context.js";
import { printHint, printJson } from "../output.js";

/** A key is a line; more than this on stdin is not one. */
const MAX_TOKEN_BYTES = 16 * 1024;

/** Reads stdin to its end (bounded), without one trailing newline; empty or several lines are usage errors. */
export async function readTokenFrom(stdin: AsyncIterable<string | Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk);
    size += bytes.length;
    if (size > MAX_TOKEN_BYTES)
      throw new UsageError(`--with-token: stdin holds more than ${MAX_TOKEN_BYTES} bytes; give one key`);
    chunks.push(bytes);
  }
  const token = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  if (token.trim() === "")
    throw new UsageError(
      "--with-token: nothing on stdin; pipe the key in",
      "For example: chat-cli login --with-token < key.txt",
    );
  if (/[\r\n]/.test(token) || token !== token.trim())
    throw new UsageError("--with-token: stdin must hold the key alone, on one line");
  return token;
}

/** Stores the key where `chat-cli login` keeps its credentials (the same login record), so every command finds it. */
export async function loginWithToken(
  ctx: CliContext,
  tokenStore: "auto" | "keychain" | "file",
): Promise<void> {
  assertBaseUrl(ctx.globals.baseUrl);
  const token = await readTokenFrom(ctx.stdin ?? process.stdin);
  rememberSecret(token);
  const { loginKey, restServerUrl, canonicalServerUrl } = await import("../../auth/index.js");
  const { loginPaths } = await import("../../auth/login-key.js");
  const { LoginStore } = await import("../../auth/login-store.js");
  const serverUrl = canonicalServerUrl(restServerUrl(ctx.globals.baseUrl));
  const key = loginKey(serverUrl);
  const log = (_level: string, message: string) => ctx.io.stderr(`${redactForTerminal(message)}\n`);
  const store = new LoginStore(tokenStore, key, loginPaths(configDir(ctx.env ?? process.env), key), log);
  const now = Date.now();
  // No expiry and no refresh token: the key is used as it is until `chat-cli logout` removes it.
  await store.save({
    version: 1,
    serverUrl,
    authorizationServerUrl: serverUrl,
    tokens: { accessToken: token, tokenType: "Bearer", issuedAt: now },
    savedAt: now,
  });
  const storage = await store.describe();
  if (ctx.globals.json) {
    return printJson(ctx.io, {
      baseUrl: ctx.globals.baseUrl,
      storedIn: storage.kind,
      scope: null,
      account: null,
    });
  }
  printHint(
    ctx.io,
    `Key stored for ${ctx.globals.baseUrl} in the ${storage.kind} (${storage.location}). Check with \`chat-cli whoami\`.`,
  );
}
