/**
 * The conformance suite's client, in the test's own process: spawns chat-mcp-bridge for a scenario's URL and drives
 * it over stdio with the SDK v2 client, as a 2025-era client (`legacy`) or a 2026-07-28 one (`modern`: pinned to
 * 2026-07-28, `server/discover` first). The suite starts test/conformance-client/client.mjs per scenario, which
 * only hands the scenario to serveDriver's socket and exits with the code it gets back.
 */
import { rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import * as z from "zod";
import { scratchDir } from "../support/scratch-dir.js";

const root = resolve(import.meta.dirname, "../..");
export type Driver = "legacy" | "modern";
/** The client ID metadata document URL the suite's `auth/basic-cimd` server expects as client_id. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";
/** How much of the bridge's stderr a result keeps (the tail: where a failure says what went wrong). */
const OUTPUT_CAP = 16_000;

/** What client.mjs sends: the scenario, its server's URL and context (the suite's env), and the driver. */
const ScenarioRequest = z.object({
  scenario: z.string(),
  serverUrl: z.string(),
  context: z.record(z.string(), z.unknown()),
  driver: z.enum(["legacy", "modern"]),
  /** Which run of the suite asked (the test's label for a requirement set and driver). */
  cell: z.string(),
});
export type ScenarioRequest = z.infer<typeof ScenarioRequest>;
export interface ScenarioRun {
  exitCode: number;
  output: string;
}

/** The bridge's argv and env for a scenario: its sign-in flags from the scenario's name and context. */
function bridgeCommand({ scenario, serverUrl, context }: ScenarioRequest, configDir: string) {
  const text = (key: string) => (typeof context[key] === "string" ? (context[key] as string) : undefined);
  const args = [join(root, "bin/chat-mcp-bridge.js"), "--token-store", "file", "--auth-timeout", "20"];
  const clientId = text("client_id");
  if (clientId) args.push("--client-id", clientId);
  else if (scenario.startsWith("auth/")) args.push("--client-metadata-url", CLIENT_METADATA_URL);
  // Machine-to-machine scenarios: the client_credentials grant, with the secret below or a private key kept in a
  // 0600 file of this run's config folder (never in argv).
  if (scenario.startsWith("auth/client-credentials")) args.push("--client-credentials");
  /** A secret the scenario hands over, in a 0600 file of the run's config folder, as a platform would leave it. */
  const secretFile = (name: string, content: string) => {
    const file = join(configDir, name);
    writeFileSync(file, content, { mode: 0o600 });
    return file;
  };
  const privateKey = text("private_key_pem");
  if (privateKey) args.push("--client-private-key", secretFile("client-key.pem", privateKey));
  // Sign-in with an assertion: the workload's platform token, or the person's ID token at the enterprise IdP.
  const workloadToken = text("valid_jwt");
  if (workloadToken) args.push("--workload-token-file", secretFile("workload-token.jwt", workloadToken));
  const idpIssuer = text("idp_issuer");
  if (idpIssuer) {
    args.push("--idp-issuer", idpIssuer, "--idp-client-id", text("idp_client_id") ?? "");
    args.push("--idp-id-token-file", secretFile("id-token.jwt", text("idp_id_token") ?? ""));
  }
  if (process.env.CONFORMANCE_BRIDGE_DEBUG) args.push("--debug");
  args.push(serverUrl);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    CHAT_CONFIG_DIR: configDir,
    // A headless browser: follows the authorization URL's redirects over HTTP to the bridge's callback.
    BROWSER: `${process.execPath} ${join(root, "test/auth/fixtures/http-browser.mjs")}`,
    CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "5000",
  };
  const secret = text("client_secret");
  if (secret) env.CHAT_MCP_CLIENT_SECRET = secret;
  return { args, env };
}

/** Arguments for a tool from its input schema: numbers, strings and booleans get simple values. */
function sampleArguments(schema: { properties?: Record<string, { type?: unknown }> } | undefined) {
  const values: Record<string, unknown> = { number: 1, integer: 1, string: "test", boolean: true };
  return Object.fromEntries(
    Object.entries(schema?.properties ?? {}).map(([name, property]) => [
      name,
      values[String(property?.type)] ?? null,
    ]),
  );
}

/** The tool the suite's schema-preservation scenario asks a client to send another tool's input schema back to. */
const ECHO_TOOL = "json_schema_echo";

/**
 * The calls a scenario wants: the ones its context lists (`toolCalls`, exact arguments), else one per listed tool;
 * the echo tool gets the other tools' input schemas as this client saw them (to show what came through intact).
 */
function plannedCalls(
  tools: Array<{ name: string; inputSchema: Record<string, unknown> }>,
  context: Record<string, unknown>,
): Array<{ name: string; arguments: Record<string, unknown> }> {
  if (Array.isArray(context.toolCalls)) return context.toolCalls;
  const echo = tools.find((tool) => tool.name === ECHO_TOOL);
  const others = tools.filter((tool) => tool !== echo);
  return [
    ...others.map((tool) => ({ name: tool.name, arguments: sampleArguments(tool.inputSchema) })),
    ...(echo ? others.map((tool) => ({ name: ECHO_TOOL, arguments: { schema: tool.inputSchema } })) : []),
  ];
}

/** Runs one scenario: the bridge as a process, driven as an MCP client app would; ends within `timeoutMs`. */
export async function driveScenario(request: ScenarioRequest, timeoutMs: number): Promise<ScenarioRun> {
  // A scratch folder, removed again after the file: the bridge's detached sign-in process outlives the bridge (by
  // design) and may still write its login here after this scenario's own removal below.
  const configDir = scratchDir("chat-mcp-bridge-conformance-");
  const { args, env } = bridgeCommand(request, configDir);
  const transport = new StdioClientTransport({ command: process.execPath, args, env, stderr: "pipe" });
  let output = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_CAP);
  });
  const client = new Client(
    { name: "chat-mcp-bridge-conformance-client", version: "1.0.0" },
    {
      capabilities: { elicitation: {} },
      ...(request.driver === "modern"
        ? { versionNegotiation: { mode: { pin: "2026-07-28" as const } } }
        : {}),
    },
  );
  // Like an MCP client app: accept with the defaults the form declares (the bridge relays the schema untouched).
  client.setRequestHandler("elicitation/create", async (elicitation) => {
    const form = "requestedSchema" in elicitation.params ? elicitation.params.requestedSchema : undefined;
    const content = Object.fromEntries(
      Object.entries(form?.properties ?? {})
        .filter(([, property]) => property.default !== undefined)
        .map(([name, property]) => [name, property.default]),
    );
    return { action: "accept" as const, content: content as Record<string, string> };
  });
  const timer = setTimeout(() => {
    output += `\nconformance driver: the scenario did not end within ${timeoutMs} ms`;
    void client.close();
  }, timeoutMs);
  let exitCode = 0;
  try {
    await client.connect(transport);
    if (request.scenario !== "initialize") {
      const { tools } = await client.listTools();
      // The suite's $ref scenario serves tools/list only: it checks what the client fetched while listing.
      if (request.scenario !== "json-schema-ref-no-deref") {
        for (const call of plannedCalls(tools, request.context)) await client.callTool(call);
      }
    }
  } catch (error) {
    output += `\nconformance driver: ${error instanceof Error ? error.message : String(error)}`;
    exitCode = 1;
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
    rmSync(configDir, { recursive: true, force: true });
  }
  return { exitCode, output };
}

/** A counting gate: at most `limit` jobs at once, the rest wait their turn (in order). */
export function gate(limit: number): <T>(job: () => Promise<T>) => Promise<T> {
  let running = 0;
  const queue: Array<() => void> = [];
  return async (job) => {
    if (running >= limit) await new Promise<void>((go) => queue.push(go));
    running += 1;
    try {
      return await job();
    } finally {
      running -= 1;
      queue.shift()?.();
    }
  };
}

/**
 * Listens on 127.0.0.1 for client.mjs: one JSON line in (a ScenarioRequest), one JSON line out (a ScenarioRun).
 * `inTurn` bounds how many scenarios run at once; `onRun` sees every finished run (not one that `runs` left out).
 */
export async function serveDriver(options: {
  inTurn: <T>(job: () => Promise<T>) => Promise<T>;
  /** Whether the scenario is run at all: one that is not fails at once, with no bridge started. */
  runs: (request: ScenarioRequest) => boolean;
  timeoutMs: number;
  onRun: (request: ScenarioRequest, run: ScenarioRun) => void;
}): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => {
    let received = "";
    socket.setEncoding("utf8");
    socket.on("error", () => {});
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (received.length > 1_000_000) return void socket.destroy();
      const end = received.indexOf("\n");
      if (end === -1) return;
      socket.removeAllListeners("data");
      const request = ScenarioRequest.parse(JSON.parse(received.slice(0, end)));
      if (!options.runs(request))
        return void socket.end(`${JSON.stringify({ exitCode: 1, output: "not run in this cell" })}\n`);
      void options
        .inTurn(() => driveScenario(request, options.timeoutMs))
        .then((run) => {
          options.onRun(request, run);
          socket.end(`${JSON.stringify(run)}\n`);
        });
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { port: address.port, server };
}
