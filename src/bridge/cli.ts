/**
 * The `chat-mcp-bridge` command line: `[options] [mcp-url]`, `login [mcp-url]`, `logout [mcp-url]`. The plain
 * relay command line, what MCP clients run on every start, is read by hand; commander (a large module) loads
 * only for subcommands, help, version and mistakes, so its messages and suggestions stay the ones users see.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type * as Commander from "commander";
import { defaultMcpUrl } from "../config/index.js";
import { type CustomHeader, HeaderOptionError, parseHeaderOption } from "./headers.js";

export type TokenStoreChoice = "auto" | "keychain" | "file";

/** Everything the bridge needs to run, parsed and checked. */
export interface BridgeOptions {
  url: URL;
  headers: CustomHeader[];
  callbackPort?: number;
  openBrowser: boolean;
  authTimeoutMs?: number;
  tokenStore: TokenStoreChoice;
  allowHttp: boolean;
  debug: boolean;
  clientId?: string;
  /** From `$CHAT_MCP_CLIENT_SECRET`, never from a flag. */
  clientSecret?: string;
  clientMetadataUrl?: string;
}

export type BridgeCommand =
  | { kind: "relay"; options: BridgeOptions }
  | { kind: "login"; options: BridgeOptions }
  | { kind: "logout"; options: BridgeOptions };

/** A usage mistake: exit code 2 with this message. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: the help text shows the syntax users type
const HEADER_HELP = 'extra HTTP header "Name: value" (repeatable; ${ENV} is expanded from the environment)';
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Parses argv (as `process.argv`) into a command; throws `UsageError` or commander's `CommanderError`. */
export function parseBridgeArgs(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  writeErr: (text: string) => void = (text) => process.stderr.write(text),
): BridgeCommand {
  return parseRelayArgs(argv, env, writeErr) ?? parseBridgeArgsWithCommander(argv, env, writeErr);
}

/** True for the errors commander throws (help, version and usage mistakes carry its exit code). */
export function isCommanderError(error: unknown): error is Commander.CommanderError {
  return commander !== undefined && error instanceof commander.CommanderError;
}

let commander: typeof Commander | undefined;

/** commander, loaded on first use (not bundled: it is a dependency, resolved from node_modules). */
function loadCommander(): typeof Commander {
  commander ??= createRequire(import.meta.url)("commander") as typeof Commander;
  return commander;
}

const FLAG_OPTIONS: Record<string, [key: string, value: boolean]> = {
  "--no-browser": ["browser", false],
  "--allow-http": ["allowHttp", true],
  "--debug": ["debug", true],
};
const TOKEN_STORES: readonly string[] = ["auto", "keychain", "file"];
const SUBCOMMAND_NAMES = new Set(["login", "logout", "help"]);

/**
 * The relay command line read by hand: known options (`--name value` or `--name=value`, values checked as
 * commander checks them) and at most one URL. Anything else (a subcommand, help, version, an unknown option,
 * a bad value, an extra argument) gives `undefined`, for commander to handle and explain.
 */
export function parseRelayArgs(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  writeErr: (text: string) => void = (text) => process.stderr.write(text),
): BridgeCommand | undefined {
  const opts: Record<string, unknown> = { header: [], tokenStore: "auto" };
  let url: string | undefined;
  for (let index = 2; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg.length < 2 || arg[0] !== "-") {
      if (url !== undefined || SUBCOMMAND_NAMES.has(arg)) return undefined;
      url = arg;
      continue;
    }
    const flag = FLAG_OPTIONS[arg];
    if (flag) {
      opts[flag[0]] = flag[1];
      continue;
    }
    const equals = arg.indexOf("=");
    const name = equals === -1 ? arg : arg.slice(0, equals);
    const value = equals === -1 ? argv[++index] : arg.slice(equals + 1);
    if (value === undefined) return undefined;
    switch (name) {
      case "--header":
        (opts.header as string[]).push(value);
        break;
      case "--callback-port":
        opts.callbackPort = portOf(value);
        if (opts.callbackPort === undefined) return undefined;
        break;
      case "--auth-timeout":
        opts.authTimeout = secondsOf(value);
        if (opts.authTimeout === undefined) return undefined;
        break;
      case "--token-store":
        if (!TOKEN_STORES.includes(value)) return undefined;
        opts.tokenStore = value;
        break;
      case "--client-id":
        opts.clientId = value;
        break;
      case "--client-metadata-url":
        opts.clientMetadataUrl = value;
        break;
      default:
        return undefined;
    }
  }
  return { kind: "relay", options: toBridgeOptions(url, opts, env, writeErr) };
}

/** The whole command line through commander: subcommands, `--help`, `--version`, and its error messages. */
export function parseBridgeArgsWithCommander(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  writeErr: (text: string) => void = (text) => process.stderr.write(text),
): BridgeCommand {
  const { Command } = loadCommander();
  let parsed: BridgeCommand | undefined;
  const program = new Command("chat-mcp-bridge")
    .description(
      "Relay an MCP client over stdio to a remote streamable-HTTP MCP server, signing in with OAuth.",
    )
    .version(packageVersion(), "-V, --version")
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeErr, outputError: (text, write) => write(text) })
    .showHelpAfterError("(run chat-mcp-bridge --help for usage)");

  const build =
    (kind: BridgeCommand["kind"]) =>
    (url: string | undefined, _opts: unknown, command: Commander.Command) => {
      parsed = { kind, options: toBridgeOptions(url, mergedOptions(command), env, writeErr) };
    };

  withConnectionOptions(
    program.argument("[mcp-url]", "MCP endpoint URL (default: $CHAT_MCP_URL or <base>/mcp)"),
  ).action(build("relay"));
  withConnectionOptions(
    program.command("login").description("Sign in ahead of time and store the tokens").argument("[mcp-url]"),
  ).action(build("login"));
  withConnectionOptions(
    program
      .command("logout")
      .description("Forget the stored tokens and client registration")
      .argument("[mcp-url]"),
  ).action(build("logout"));

  program.parse(argv);
  if (!parsed) throw new UsageError("nothing to do");
  return parsed;
}

function withConnectionOptions(command: Commander.Command): Commander.Command {
  return command
    .option("--header <header>", HEADER_HELP, collect, [])
    .option("--callback-port <port>", "port of the local OAuth callback", parsePort)
    .option("--no-browser", "print the sign-in URL on stderr instead of opening a browser")
    .option("--auth-timeout <seconds>", "how long to wait for the browser sign-in", parseSeconds)
    .addOption(
      new (loadCommander().Option)("--token-store <store>", "where tokens are kept")
        .choices(["auto", "keychain", "file"])
        .default("auto"),
    )
    .option("--allow-http", "allow plain http to a non-loopback server")
    .option("--debug", "detailed logs on stderr (never tokens or header values)")
    .option("--client-id <id>", "pre-registered OAuth client id (secret from $CHAT_MCP_CLIENT_SECRET)")
    .option("--client-metadata-url <url>", "https URL of a client ID metadata document");
}

/** The command's options, with those given before a subcommand's name (`--debug login`) filling in. */
function mergedOptions(command: Commander.Command): Record<string, unknown> {
  const merged = { ...command.opts() };
  const parent = command.parent;
  if (!parent) return merged;
  for (const [key, value] of Object.entries(parent.opts())) {
    if (parent.getOptionValueSource(key) !== "cli") continue;
    if (command.getOptionValueSource(key) === "cli" && key !== "header") continue;
    merged[key] = key === "header" ? [...(value as string[]), ...((merged.header as string[]) ?? [])] : value;
  }
  return merged;
}

function toBridgeOptions(
  rawUrl: string | undefined,
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  writeErr: (text: string) => void,
): BridgeOptions {
  const allowHttp = opts.allowHttp === true;
  const url = parseMcpUrl(rawUrl ?? defaultMcpUrl(env), allowHttp);
  const headers = (opts.header as string[]).map((raw) => {
    try {
      return parseHeaderOption(raw, env, (variable) =>
        writeErr(`chat-mcp-bridge: warning: \${${variable}} in --header is not set; using an empty value\n`),
      );
    } catch (error) {
      if (error instanceof HeaderOptionError) throw new UsageError(error.message);
      throw error;
    }
  });
  const clientMetadataUrl = opts.clientMetadataUrl as string | undefined;
  if (clientMetadataUrl !== undefined) {
    let metadataUrl: URL | undefined;
    try {
      metadataUrl = new URL(clientMetadataUrl);
    } catch {}
    if (metadataUrl?.protocol !== "https:" || metadataUrl.pathname === "/") {
      throw new UsageError("--client-metadata-url must be an https URL with a path");
    }
  }
  return {
    url,
    headers,
    callbackPort: opts.callbackPort as number | undefined,
    openBrowser: opts.browser !== false,
    authTimeoutMs: opts.authTimeout === undefined ? undefined : (opts.authTimeout as number) * 1000,
    tokenStore: opts.tokenStore as TokenStoreChoice,
    allowHttp,
    debug: opts.debug === true,
    clientId: opts.clientId as string | undefined,
    clientSecret: opts.clientId ? env.CHAT_MCP_CLIENT_SECRET || undefined : undefined,
    clientMetadataUrl,
  };
}

/** An http(s) URL; plain http only to loopback unless `--allow-http`. */
export function parseMcpUrl(raw: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`"${raw}" is not a URL; pass the MCP endpoint, e.g. https://example.com/mcp`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UsageError(`the MCP URL must be http(s), not ${url.protocol}`);
  }
  if (url.username || url.password) throw new UsageError("the MCP URL must not contain credentials");
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname) && !allowHttp) {
    throw new UsageError(
      `refusing plain http to ${url.host}: tokens would travel unencrypted; use https or pass --allow-http`,
    );
  }
  return url;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function portOf(value: string): number | undefined {
  const port = Number(value);
  return /^\d+$/.test(value) && port >= 1 && port <= 65535 ? port : undefined;
}

function secondsOf(value: string): number | undefined {
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

function parsePort(value: string): number {
  const port = portOf(value);
  if (port === undefined) throw new (loadCommander().InvalidArgumentError)("expected a port, 1-65535");
  return port;
}

function parseSeconds(value: string): number {
  const seconds = secondsOf(value);
  if (seconds === undefined)
    throw new (loadCommander().InvalidArgumentError)("expected a positive number of seconds");
  return seconds;
}

/** The package version, read from the nearest package.json above this module (source or bundle). */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "chat-mcp-bridge" && pkg.version) return pkg.version;
    } catch {}
    dir = dirname(dir);
  }
  return "0.0.0";
}
