/** `chat-cli serve`: the reference server in the foreground, with its URLs, seeded accounts, dev keys and client configs, and its `--oauth-config` file. */
import { existsSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import * as z from "zod";
import { readSmallFile } from "../../internal/files.js";
import { packageRoot } from "../../internal/package-version.js";
import { UsageError } from "../../internal/usage-error.js";
import type { ReferenceServerOptions } from "../../server/index.js";
import type { CliContext } from "../context.js";
import {
  type CommandInput,
  defineCommand,
  fieldName,
  fieldProblem,
  parseDpopMode,
  parseMcpEra,
  parseMilliseconds,
  parsePort,
  parseSeconds,
  valueFlag,
  withDefault,
} from "../define-command.js";
import { CliError, EXIT } from "../errors.js";
import { printJson } from "../output.js";

const serveFlags = {
  port: withDefault(valueFlag("--port <port>", "port to listen on (0 picks a free one)", parsePort), 8787),
  host: withDefault(valueFlag("--host <host>", "interface to listen on"), "127.0.0.1"),
  autoApprove: valueFlag(
    "--auto-approve <slug>",
    "approve OAuth sign-ins for this account or team without a consent page",
  ),
  data: valueFlag("--data <file>", "keep the server's data in this JSON file"),
  assistantDelay: valueFlag(
    "--assistant-delay <ms>",
    "make the scripted assistant take this long to answer (to try long waits)",
    parseMilliseconds,
  ),
  /** `--token-ttl <s>`: access-token lifetime in seconds. */
  tokenTtl: valueFlag(
    "--token-ttl <s>",
    "OAuth access tokens expire after this many seconds (to exercise refresh)",
    parseSeconds,
  ),
  mcpEra: withDefault(
    valueFlag(
      "--mcp-era <era>",
      "MCP protocol eras /mcp serves: both (default), modern (2026-07-28) or legacy (2025-11-25)",
      parseMcpEra,
    ),
    "both",
  ),
  dpop: valueFlag(
    "--dpop <mode>",
    "DPoP-bound tokens (RFC 9449): allowed (default), required or off",
    parseDpopMode,
  ),
  /** `--public-url`: the base URL clients reach the server at (behind a proxy). */
  publicUrl: valueFlag(
    "--public-url <url>",
    "base URL for links and OAuth metadata when the server sits behind a proxy",
  ),
  oauthConfig: valueFlag(
    "--oauth-config <file>",
    "a JSON file (yours alone) of oauthClients, trustedWorkloadIssuers, trustedEnterpriseIdps and referenceIdp",
  ),
};
export type ServeOptions = CommandInput<Record<never, never>, typeof serveFlags>;

function eraNote(era: "both" | "modern" | "legacy"): string {
  if (era === "modern") return "2026-07-28 only (stateless; 2025-era initialize is refused)";
  if (era === "legacy") return "2025-11-25 and older only (sessions; no server/discover)";
  return "2026-07-28 (stateless) and 2025-11-25 (sessions)";
}

/**
 * The words beside the stdio config: how to run this copy's bridge (the config that works from any folder runs its
 * bin with node; `npm link` is offered only in a checkout, where it puts the bin on the PATH), and the npx config,
 * which runs the release published on npm instead.
 */
export function localBridgeNote(
  bridgeBin: string | undefined,
  { checkout = true, mcpUrl = "<mcp-url>" }: { checkout?: boolean; mcpUrl?: string } = {},
): string[] {
  const bin =
    bridgeBin ?? (checkout ? "<this checkout>/bin/chat-mcp-bridge.js" : "<package>/bin/chat-mcp-bridge.js");
  const npx = JSON.stringify({
    mcpServers: { chat: { command: "npx", args: ["-y", "chat-mcp-bridge", mcpUrl] } },
  });
  const node = `{"command":"node","args":[${JSON.stringify(bin)},"<mcp-url>"]}`;
  return [
    checkout
      ? `  This checkout's bridge, from any folder: ${node}, or run \`npm link\` in this checkout`
      : `  This installed package's bridge, from any folder: ${node}.`,
    ...(checkout ? ['  and use {"command":"chat-mcp-bridge","args":["<mcp-url>"]}.'] : []),
    `  The release on npm: ${npx}`,
  ];
}

/** This package's bridge bin (bin/chat-mcp-bridge.js), or undefined when the package folder cannot be found. */
export function bridgeBinPath(root: string | undefined = packageRoot()): string | undefined {
  return root ? join(root, "bin", "chat-mcp-bridge.js") : undefined;
}

/** A checkout of the repository has the TypeScript sources; the published package ships none. */
export function isCheckout(root: string | undefined = packageRoot()): boolean {
  return root !== undefined && existsSync(join(root, "src", "cli"));
}

/** Hosts that listen on every interface of the machine. */
const EVERY_INTERFACE = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * For `--host 0.0.0.0` (or `::`): a warning that anyone on the network can reach this dev server, and the URLs
 * other machines reach it at (the base URL printed is the loopback one); nothing for any other host.
 */
export function everyInterfaceNote(
  host: string,
  port: number,
  interfaces: ReturnType<typeof networkInterfaces>,
): string[] {
  if (!EVERY_INTERFACE.has(host)) return [];
  const addresses = Object.values(interfaces)
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal && (entry.family === "IPv4" || host !== "0.0.0.0"))
    .filter((entry) => !entry.address.startsWith("fe80:"))
    .map((entry) =>
      entry.family === "IPv6" ? `http://[${entry.address}]:${port}` : `http://${entry.address}:${port}`,
    );
  return [
    `  Warning:   listening on every network interface (${host}): anyone who can reach this machine can use this`,
    "             dev server, its seeded accounts and dev keys. Use --host 127.0.0.1 unless you mean it.",
    ...(addresses.length > 0
      ? [`  From other machines: ${addresses.join(", ")} (pass --public-url with that address for sign-ins)`]
      : []),
  ];
}

/** Runs until SIGINT or SIGTERM, then closes the server and returns (exit 0). */
export async function serve(options: ServeOptions, ctx: CliContext): Promise<void> {
  const { startReferenceServer, SEED_ACCOUNTS, SEED_USERS } = await import("../../server/index.js");
  const oauthConfig = options.oauthConfig ? readServeOAuthConfig(options.oauthConfig) : {};
  const server = await startReferenceServer({
    ...oauthConfig,
    port: options.port,
    host: options.host,
    ...(options.data ? { dataFile: options.data } : {}),
    ...(options.autoApprove ? { autoApprove: options.autoApprove } : {}),
    ...(options.assistantDelay ? { assistantDelayMs: options.assistantDelay } : {}),
    ...(options.tokenTtl ? { accessTokenTtlSeconds: options.tokenTtl } : {}),
    ...(options.mcpEra ? { mcpEra: options.mcpEra } : {}),
    ...(options.dpop ? { dpop: options.dpop } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  }).catch((error: unknown) => {
    // The server's option is `autoApprove`; the person typed `--auto-approve`.
    if (error instanceof Error && error.message.startsWith("autoApprove: ")) {
      throw new CliError(`--auto-approve ${error.message.slice("autoApprove: ".length)}`, EXIT.usage);
    }
    if (error instanceof TypeError && /publicUrl/.test(error.message)) {
      throw new CliError(`--public-url ${error.message.replace(/^publicUrl /, "")}`, EXIT.usage);
    }
    if ((error as NodeJS.ErrnoException | null)?.code !== "EADDRINUSE") throw error;
    const where = `${options.host.includes(":") ? `[${options.host}]` : options.host}:${options.port}`;
    throw new CliError(
      `port ${options.port} on ${options.host} is already in use by another program; cannot listen on ${where}`,
      EXIT.error,
      `Pick a free port with --port 0 (or another number), or stop the program using it. If it is another \`chat-cli serve\`, use it with --base-url http://${where}.`,
      error,
    );
  });
  const apiKeys: Record<string, string> = { ...server.apiKeys };
  const bridgeBin = bridgeBinPath();
  const configs = {
    // What works today from any folder: this package's bin run with node (npx cannot fetch the package yet).
    stdio: {
      mcpServers: {
        chat: bridgeBin
          ? { command: "node", args: [bridgeBin, server.mcpUrl] }
          : { command: "npx", args: ["-y", "chat-mcp-bridge", server.mcpUrl] },
      },
    },
    remote: { mcpServers: { chat: { url: server.mcpUrl } } },
  };
  const accountNote = (slug: string): string => {
    const account = SEED_ACCOUNTS.find((candidate) => candidate.slug === slug);
    if (account?.requiresSso) return "   (team, requires SSO)";
    if (account && !account.hostProjectId)
      return "   (team, no hosting project: integrations cannot proceed)";
    return account ? `   (${account.kind})` : "";
  };
  if (ctx.globals.json) {
    printJson(ctx.io, { url: server.url, mcpUrl: server.mcpUrl, apiKeys, clientConfigs: configs });
  } else {
    const [firstSlug, firstKey] = Object.entries(apiKeys)[0] ?? ["", ""];
    const lines = [
      `Reference server running (dev only; Ctrl-C to stop)`,
      `  Base URL:  ${server.url}`,
      `  MCP URL:   ${server.mcpUrl}`,
      `  MCP eras:  ${eraNote(options.mcpEra ?? "both")}`,
      ...everyInterfaceNote(options.host, Number(new URL(server.url).port), networkInterfaces()),
      ...(options.autoApprove
        ? [`  Sign-ins for ${options.autoApprove} are approved without a consent page.`]
        : []),
      ...(options.tokenTtl
        ? [`  Access tokens expire after ${options.tokenTtl} s (refresh tokens renew them).`]
        : []),
      ...(oauthConfig.referenceIdp ? [`  Enterprise IdP (for --idp-issuer): ${server.url}/idp`] : []),
      ``,
      `Seeded accounts and dev API keys (for /v2 only, never in an MCP client config):`,
      ...Object.entries(apiKeys).map(([slug, key]) => `  ${slug.padEnd(12)} ${key}${accountNote(slug)}`),
      `Browser sign-in (consent, chat and preview pages): ${SEED_USERS.map((u) => `${u.id}/${u.password}`).join(", ")}`,
      ``,
      `Try it:`,
      `  export CHAT_API_URL=${server.url} CHAT_API_KEY=${firstKey}   # ${firstSlug}`,
      `  chat-cli create "Add a database to my app"`,
      ``,
      `MCP client config (stdio bridge):`,
      `  ${JSON.stringify(configs.stdio)}`,
      ...localBridgeNote(bridgeBin, { checkout: isCheckout(), mcpUrl: server.mcpUrl }),
      `MCP client config (clients with remote support):`,
      `  ${JSON.stringify(configs.remote)}`,
    ];
    ctx.io.stdout(`${lines.join("\n")}\n`);
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  ctx.io.stderr("Stopping…\n");
  await server.close();
}

// `--oauth-config <file>`: pre-registered clients and what the jwt-bearer grant trusts, read from a JSON file and checked with zod.

const FLAG = "--oauth-config";
/** A few clients and issuers with their keys: far below this. */
const MAX_CONFIG_BYTES = 256 * 1024;

const Jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) });

/** The options of `startReferenceServer` a file may set, by their names there; unknown fields are typos. */
const ServeOAuthConfigSchema = z
  .object({
    oauthClients: z
      .array(
        z
          .object({
            client_id: z.string().min(1),
            client_secret: z.string().min(1).optional(),
            jwks: Jwks.optional(),
            redirect_uris: z.array(z.string()).optional(),
            client_name: z.string().optional(),
            client_credentials_account: z.string().optional(),
          })
          .strict(),
      )
      .optional(),
    trustedWorkloadIssuers: z
      .array(
        z
          .object({
            issuer: z.string().min(1),
            jwks: Jwks,
            audience: z.union([z.string(), z.array(z.string())]).optional(),
            account: z.string().min(1),
            subjects: z.array(z.string()).optional(),
          })
          .strict(),
      )
      .optional(),
    trustedEnterpriseIdps: z
      .array(z.object({ issuer: z.string().min(1), jwks: Jwks, account: z.string().min(1) }).strict())
      .optional(),
    referenceIdp: z
      .object({
        clientId: z.string().min(1),
        clientSecret: z.string().min(1).optional(),
        account: z.string().min(1),
        mcpClientId: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type ServeOAuthConfig = Pick<
  ReferenceServerOptions,
  "oauthClients" | "trustedWorkloadIssuers" | "trustedEnterpriseIdps" | "referenceIdp"
>;

/** The file's options; a file others can read is refused (it may hold client secrets). */
export function readServeOAuthConfig(path: string): ServeOAuthConfig {
  const text = readSmallFile(path, {
    flag: FLAG,
    maxBytes: MAX_CONFIG_BYTES,
    holds: "one JSON object",
    privateToUser: true,
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`${FLAG}: ${JSON.stringify(path)} is not valid JSON`);
  }
  const parsed = ServeOAuthConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${FLAG}: ${fieldName(issue, "the file")} ${fieldProblem(issue, json)}`);
  }
  return parsed.data as ServeOAuthConfig;
}

export const serveCommand = defineCommand({ arguments: {}, options: serveFlags, run: serve });
