#!/usr/bin/env node
/**
 * A conformance-suite client: spawns chat-mcp-bridge for the URL (last argument) and drives it over stdio with
 * the SDK v2 client, as a 2025-era client (`CONFORMANCE_DRIVER=legacy`, the default) or a 2026-07-28 one
 * (`CONFORMANCE_DRIVER=modern`: pinned to 2026-07-28, `server/discover` first).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const serverUrl = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const driver = process.env.CONFORMANCE_DRIVER === "modern" ? "modern" : "legacy";
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
/** The client ID metadata document URL the suite's `auth/basic-cimd` server expects as client_id. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

const configDir = mkdtempSync(join(tmpdir(), "chat-mcp-bridge-conformance-"));
const args = [join(root, "bin/chat-mcp-bridge.js"), "--token-store", "file", "--auth-timeout", "20"];
if (context.client_id) args.push("--client-id", context.client_id);
else if (scenario.startsWith("auth/")) args.push("--client-metadata-url", CLIENT_METADATA_URL);
// Machine-to-machine scenarios: the client_credentials grant, with the secret below or a private key kept in a
// 0600 file of this run's config folder (never in argv).
if (scenario.startsWith("auth/client-credentials")) args.push("--client-credentials");
if (context.private_key_pem) {
  const keyFile = join(configDir, "client-key.pem");
  writeFileSync(keyFile, context.private_key_pem, { mode: 0o600 });
  args.push("--client-private-key", keyFile);
}
// Sign-in with an assertion: the workload's platform token, or the person's ID token at the enterprise IdP, each in
// a 0600 file of this run's config folder, as a platform or an IdP's helper would leave it (never in argv).
if (context.valid_jwt) {
  const tokenFile = join(configDir, "workload-token.jwt");
  writeFileSync(tokenFile, context.valid_jwt, { mode: 0o600 });
  args.push("--workload-token-file", tokenFile);
}
if (context.idp_issuer) {
  const idTokenFile = join(configDir, "id-token.jwt");
  writeFileSync(idTokenFile, context.idp_id_token, { mode: 0o600 });
  args.push("--idp-issuer", context.idp_issuer, "--idp-client-id", context.idp_client_id);
  args.push("--idp-id-token-file", idTokenFile);
}
if (process.env.CONFORMANCE_BRIDGE_DEBUG) args.push("--debug");
args.push(serverUrl);

const env = {
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  CHAT_CONFIG_DIR: configDir,
  // A headless browser: follows the authorization URL's redirects over HTTP to the bridge's callback.
  BROWSER: `${process.execPath} ${join(root, "test/auth/fixtures/http-browser.mjs")}`,
  CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS: "5000",
};
if (context.client_secret) env.CHAT_MCP_CLIENT_SECRET = context.client_secret;

const transport = new StdioClientTransport({ command: process.execPath, args, env, stderr: "inherit" });
const client = new Client(
  { name: "chat-mcp-bridge-conformance-client", version: "1.0.0" },
  {
    capabilities: { elicitation: {} },
    ...(driver === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
  },
);
// Like an MCP client app: accept with the defaults the form declares (the bridge relays the schema untouched).
client.setRequestHandler("elicitation/create", async (request) => {
  const properties = request.params.requestedSchema?.properties ?? {};
  const content = Object.fromEntries(
    Object.entries(properties)
      .filter(([, property]) => property && "default" in property)
      .map(([name, property]) => [name, property.default]),
  );
  return { action: "accept", content };
});

/** Arguments for a tool from its input schema: numbers, strings and booleans get simple values. */
function sampleArguments(schema) {
  const values = { number: 1, integer: 1, string: "test", boolean: true };
  return Object.fromEntries(
    Object.entries(schema?.properties ?? {}).map(([name, property]) => [
      name,
      values[property?.type] ?? null,
    ]),
  );
}

/** The tool the suite's schema-preservation scenario asks a client to send another tool's input schema back to. */
const ECHO_TOOL = "json_schema_echo";

/**
 * The calls a scenario wants: the ones its context lists (`toolCalls`, exact arguments), else one per listed tool;
 * the echo tool gets the other tools' input schemas as this client saw them (to show what came through intact).
 */
function plannedCalls(tools) {
  if (Array.isArray(context.toolCalls)) return context.toolCalls;
  const echo = tools.find((tool) => tool.name === ECHO_TOOL);
  const others = tools.filter((tool) => tool !== echo);
  return [
    ...others.map((tool) => ({ name: tool.name, arguments: sampleArguments(tool.inputSchema) })),
    ...(echo ? others.map((tool) => ({ name: ECHO_TOOL, arguments: { schema: tool.inputSchema } })) : []),
  ];
}

let exitCode = 0;
try {
  await client.connect(transport);
  if (scenario !== "initialize") {
    const { tools } = await client.listTools();
    // The suite's $ref scenario serves tools/list only: it checks what the client fetched while listing.
    if (scenario !== "json-schema-ref-no-deref") {
      for (const call of plannedCalls(tools)) await client.callTool(call);
    }
  }
} catch (error) {
  process.stderr.write(`conformance client: ${error instanceof Error ? error.message : String(error)}\n`);
  exitCode = 1;
} finally {
  await client.close().catch(() => {});
  rmSync(configDir, { recursive: true, force: true });
}
process.exit(exitCode);
