/** A bin that cannot start (a Node too old, a usage error) says why on stderr and, to an MCP host, as its one tool and instructions. */

// Bundled alone for the bin shims to load before anything else (dist/bin/start-refusal.cjs, built for old Node):
// so it imports nothing, and uses nothing a Node of years ago lacks (no `node:` specifiers, no fetch, no streams API).

/** The oldest Node the package runs on: package.json's `engines.node` says the same (test/pack checks it). */
export const REQUIRED_NODE = { major: 22, minor: 12 };

/** How long a refused bridge waits for the host's first request (usually in the pipe already) before it exits anyway. */
export const REFUSAL_WAIT_MS = 5_000;
/** The most of a host's line kept to read its id (an `initialize` is a few hundred bytes). */
const MAX_REFUSAL_LINE_CHARS = 64 * 1024;

interface RefusalStreams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: { write(text: string, done?: () => void): unknown };
}

/** True when `version` (`process.version`, e.g. "v20.20.2") is older than REQUIRED_NODE. */
export function nodeTooOld(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version);
  if (!match) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major < REQUIRED_NODE.major || (major === REQUIRED_NODE.major && minor < REQUIRED_NODE.minor);
}

/** What `bin` says on a Node too old for it: which Node it needs, which it found, and how to get one. */
export function oldNodeMessage(bin: string, version: string, execPath: string): string {
  const needed = `${REQUIRED_NODE.major}.${REQUIRED_NODE.minor}`;
  return (
    `${bin} needs Node.js ${needed} or newer; it was started by Node.js ${version} (${execPath}). ` +
    `Install a current Node.js (https://nodejs.org/en/download, or \`nvm install 22\`, \`fnm install 22\`, ` +
    "`brew install node`), make it the `node` on your PATH (the one an MCP client's `npx` runs), and start it again."
  );
}

/** The one tool a refused bridge offers: its description and its answer are the refusal (hosts show tools, not errors). */
const REFUSAL_TOOL = "chat_mcp_bridge_error";
/** The longest a refused bridge serves a host that keeps its stdin open (a host ends it sooner). */
const REFUSAL_SERVE_MS = 30 * 60_000;

/**
 * The answer to one request of a host while the bridge is refused: a server whose instructions, one tool and its
 * result say `message`. Many hosts show nothing of an `initialize` error (Gemini CLI, Codex), but all show tools.
 */
export function refusalAnswer(
  request: { id: string | number; method: string; params?: unknown },
  message: string,
) {
  const params = (request.params && typeof request.params === "object" ? request.params : {}) as {
    protocolVersion?: unknown;
    _meta?: Record<string, unknown>;
  };
  const modern = params._meta !== undefined && "io.modelcontextprotocol/protocolVersion" in params._meta;
  const complete = modern ? { resultType: "complete" } : {};
  const info = { name: "chat-mcp-bridge", version: "0.0.0" };
  const { id, method } = request;
  const result = (value: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id,
    result: { ...value, ...complete },
  });
  if (method === "initialize")
    return result({
      protocolVersion: typeof params.protocolVersion === "string" ? params.protocolVersion : "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: info,
      instructions: message,
    });
  if (method === "server/discover")
    return result({
      supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
      capabilities: { tools: {} },
      instructions: message,
      _meta: { "io.modelcontextprotocol/serverInfo": info },
    });
  if (method === "tools/list")
    return result({
      tools: [
        {
          name: REFUSAL_TOOL,
          description: message,
          inputSchema: { type: "object", properties: {} },
          annotations: { readOnlyHint: true },
        },
      ],
    });
  if (method === "tools/call") return result({ content: [{ type: "text", text: message }], isError: true });
  if (method === "ping" || method === "logging/setLevel") return result({});
  if (method === "prompts/list") return result({ prompts: [] });
  if (method === "resources/list") return result({ resources: [] });
  return { jsonrpc: "2.0", id, error: { code: -32000, message } };
}

/**
 * Serves the host as a server whose one tool says `message` (refusalAnswer), so the host shows it instead of
 * "Connection closed"; a 2026-07-28 host's listen is acknowledged. Resolves when stdin ends, after `waitMs` when the
 * host sent nothing, or after REFUSAL_SERVE_MS. On a terminal nobody reads JSON-RPC: it resolves at once.
 */
export function answerHostWithError(
  message: string,
  streams: RefusalStreams = { stdin: process.stdin, stdout: process.stdout },
  waitMs: number = REFUSAL_WAIT_MS,
): Promise<void> {
  const { stdin, stdout } = streams;
  if (stdin.isTTY) return Promise.resolve();
  return new Promise((resolve) => {
    let pending = "";
    let skipping = false;
    const write = (value: unknown) => stdout.write(`${JSON.stringify(value)}\n`);
    const answer = (line: string) => {
      let request: unknown;
      try {
        request = JSON.parse(line);
      } catch (_error) {
        return;
      }
      const { id, method } = (request ?? {}) as { id?: unknown; method?: unknown };
      if (typeof method !== "string" || (typeof id !== "string" && typeof id !== "number")) return;
      // A host that speaks to it is served until it ends it (within the bound).
      clearTimeout(timer);
      if (method === "subscriptions/listen")
        write({
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { notifications: {}, _meta: { "io.modelcontextprotocol/subscriptionId": id } },
        });
      else write(refusalAnswer({ ...(request as object), id, method }, message));
    };
    const onData = (chunk: Buffer | string) => {
      const lines = (pending + chunk.toString()).split("\n");
      pending = lines.pop() || "";
      for (const line of lines) {
        if (!skipping) answer(line);
        skipping = false;
      }
      if (pending.length > MAX_REFUSAL_LINE_CHARS) {
        pending = "";
        skipping = true;
      }
    };
    const timer = setTimeout(() => finish(), waitMs);
    const cap = setTimeout(() => finish(), REFUSAL_SERVE_MS);
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(cap);
      stdin.removeListener("data", onData);
      stdin.removeListener("end", finish);
      stdin.removeListener("error", finish);
      resolve();
    };
    stdin.on("data", onData);
    stdin.on("end", finish);
    stdin.on("error", finish);
  });
}

/**
 * The bin shims' first step: true on a Node new enough. Otherwise it says which Node `bin` needs on stderr (and,
 * with `answerHost`, to the host's requests) and exits 1.
 */
export function nodeIsSupported(bin: string, options: { answerHost?: boolean } = {}): boolean {
  if (!nodeTooOld(process.version)) return true;
  const message = oldNodeMessage(bin, process.version, process.execPath);
  process.stderr.write(`${message}\n`);
  if (!options.answerHost) process.exit(1);
  void answerHostWithError(message).then(() => process.exit(1));
  return false;
}
