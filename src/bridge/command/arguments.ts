/** The `chat-mcp-bridge` command line, parsed by commander: `[options] [mcp-url]`, `login [mcp-url]`, `logout [mcp-url]` and `doctor [mcp-url]`, all with the same connection options. */
import { Command, Option } from "commander";
import { defaultMcpUrl } from "../../config/index.js";
import { closestName } from "../../internal/closest-name.js";
import { packageVersion } from "../../internal/package-version.js";
import { UsageError } from "../../internal/usage-error.js";
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_SIZE_HELP } from "../messages/message-size.js";
import {
  type BridgeOptions,
  type DoctorCommandOptions,
  type DoctorTarget,
  parseMessageSize,
  parsePort,
  parseProfile,
  parseResource,
  parseSeconds,
  type TokenStoreChoice,
} from "../options/bridge-options.js";
import { customHeadersOf } from "../options/custom-headers.js";
import { networkFlagsOf, withNetworkFlags } from "../options/network-flags.js";
import {
  assertionOptionsOf,
  authorizeParamsOf,
  checkClientCredentials,
  collectAuthorizeParam,
  parseClientMetadataOption,
} from "../options/sign-in-options.js";

export type BridgeCommand =
  | { kind: "relay" | "login" | "logout"; options: BridgeOptions }
  | { kind: "doctor"; target: DoctorTarget; options: DoctorCommandOptions };

export { UsageError };

// biome-ignore lint/suspicious/noTemplateCurlyInString: the help text shows the syntax users type
const HEADER_HELP = 'extra HTTP header "Name: value" (repeatable; ${ENV} is expanded from the environment)';
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** `--host`: the OAuth callback listens on loopback only; `localhost` on both loopback families. */
const CALLBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"];

/** The bin's commands: the relay (the program itself), the account subcommands and doctor. */
const COMMANDS = {
  relay: "Relay an MCP client over stdio to a remote streamable-HTTP MCP server, signing in with OAuth.",
  login: "Sign in ahead of time and store the tokens",
  logout: "Forget the stored tokens and client registration",
  doctor: "Check why the bridge does or does not connect: a checklist with the fix for each failure",
};

/** Parses argv (as `process.argv`) into a command; throws `UsageError` or commander's `CommanderError`. */
export function parseBridgeArgs(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  writeErr: (text: string) => void = (text) => process.stderr.write(text),
): BridgeCommand {
  let parsed: BridgeCommand | undefined;
  const program = new Command("chat-mcp-bridge")
    .version(packageVersion(), "-V, --version")
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeErr, outputError: (text, write) => write(text) })
    .showHelpAfterError("(run chat-mcp-bridge --help for usage)");

  for (const [kind, description] of Object.entries(COMMANDS) as Array<[BridgeCommand["kind"], string]>) {
    const command = kind === "relay" ? program : program.command(kind);
    command
      .description(description)
      .argument(
        "[mcp-url]",
        kind === "relay" ? "MCP endpoint URL (default: $CHAT_MCP_URL or <base>/mcp)" : "",
      );
    if (kind === "doctor")
      command
        .option("--json", "the checks as JSON on stdout")
        .option("--sign-in", "sign in in the browser when there is no usable login (never otherwise)");
    hideFlagsOf(withNetworkFlags(withConnectionOptions(command)), kind)
      // The relay counts its operands itself, so that a mistyped subcommand before a URL gets its suggestion.
      .allowExcessArguments(kind === "relay")
      .addHelpText("after", kind === "relay" ? ENVIRONMENT_HELP : "")
      .action((rawUrl: string | undefined, _opts: unknown, self: Command) => {
        if (kind === "relay") checkRelayOperands(self);
        const opts = mergedOptions(self);
        const url = rawUrl ?? defaultMcpUrl(env);
        if (kind !== "doctor") {
          const mcpUrl = parseMcpUrl(url, opts.allowHttp === true);
          parsed = { kind, options: { url: mcpUrl, ...toConnectionOptions(opts, env, writeErr) } };
          return;
        }
        const options = toConnectionOptions(opts, env, writeErr);
        const doctorOptions = { ...options, json: opts.json === true, signIn: opts.signIn === true };
        parsed = { kind, target: doctorTarget(url, options.allowHttp), options: doctorOptions };
      });
  }

  program.parse(argv);
  if (!parsed) throw new UsageError("nothing to do");
  return parsed;
}

/** The relay's operands: at most one, the URL; a subcommand's typo (`doctr`) gets a suggestion, not "not a URL". */
function checkRelayOperands(relay: Command): void {
  const [first, ...extra] = relay.args;
  const suggestion = first === undefined ? undefined : closestName(first, ["login", "logout", "doctor"]);
  if (suggestion)
    throw new UsageError(`unknown command ${JSON.stringify(first)}; did you mean "${suggestion}"?`);
  if (extra.length > 0)
    relay.error(`error: too many arguments. Expected 1 argument but got ${relay.args.length}.`, {
      code: "commander.excessArguments",
    });
}

/** The stderr line the relay prints when started by hand on a terminal (a client uses pipes), lest it look hung. */
export function relayTerminalHint(hint: {
  stdinIsTTY: boolean;
  silent?: boolean;
  url: string;
}): string | undefined {
  if (!hint.stdinIsTTY || hint.silent) return undefined;
  return (
    "chat-mcp-bridge: waiting for an MCP client on stdin (an MCP client starts this from its config); " +
    `to check the connection by hand, run: chat-mcp-bridge doctor ${hint.url} (Ctrl-C to quit)\n`
  );
}

function withConnectionOptions(command: Command): Command {
  return command
    .option("--header <header>", HEADER_HELP, collect, [])
    .option(
      "--header-file <path>",
      'headers from a file of yours that only you can read, one "Name: value" a line (repeatable)',
      collect,
      [],
    )
    .option("--callback-port <port>", "port of the local OAuth callback", parsePort)
    .option("--no-browser", "print the sign-in URL on stderr instead of opening a browser")
    .option(
      "--device-code",
      "sign in with a code entered in a browser on any device (OAuth device code, RFC 8628); also used by itself when no browser can open here and the server offers it",
    )
    .option(
      "--auth-timeout <seconds>",
      "how long to wait for the sign-in, in a browser or with a device code (default 300)",
      parseSeconds,
    )
    .addOption(
      new Option("--token-store <store>", "where tokens are kept")
        .choices(["auto", "keychain", "file"])
        .default("auto"),
    )
    .option("--allow-http", "allow plain http to a non-loopback server")
    .option("--debug", "detailed logs on stderr (never tokens or header values)")
    .option("--client-id <id>", "pre-registered OAuth client id (secret from $CHAT_MCP_CLIENT_SECRET)")
    .option("--client-metadata-url <url>", "https URL of a client ID metadata document")
    .option("--client-credentials", "sign in as the --client-id client itself: no browser, no person")
    .option("--client-private-key <pem-file>", "private_key_jwt key for --client-credentials (yours alone)")
    .option(
      "--workload-token-file <path>",
      "sign in as --client-id with the workload identity token a platform writes to this file (read again for each token)",
    )
    .option(
      "--idp-issuer <url>",
      "enterprise-managed sign-in: your identity provider (with --idp-client-id, --idp-id-token-file)",
    )
    .option("--idp-client-id <id>", "the client id at --idp-issuer (secret from $CHAT_MCP_IDP_CLIENT_SECRET)")
    .option(
      "--idp-id-token-file <path>",
      "a file holding your ID token from --idp-issuer (read again for each token)",
    )
    .option(
      "--ignore-tool <pattern>",
      "hide tools whose name matches (repeatable; * is a wildcard)",
      collect,
      [],
    )
    .option("--read-only", "expose only tools the server annotates readOnlyHint: true")
    .option(
      "--confirm-tool <pattern>",
      "ask the person (in the client's dialog) before relaying a call of a matching tool (repeatable; * is a wildcard)",
      collect,
      [],
    )
    .option("--max-message-size <MiB>", MAX_MESSAGE_SIZE_HELP, parseMessageSize)
    .option("--log-file <path>", "write the log to this file (with --debug: <config>/logs/<server-key>.log)")
    .option("--silent", "nothing on stderr but fatal errors")
    .addOption(new Option("--host <name>", "host name of the OAuth callback").choices(CALLBACK_HOSTS))
    .option("--resource <url>", "the OAuth protected resource, when it is not the MCP URL", parseResource)
    .option("--profile <name>", "a separate login, lock and log for the same URL", parseProfile)
    .option(
      "--authorize-param <key=value>",
      "extra authorization request parameter, e.g. audience=... or prompt=consent (repeatable)",
      collectAuthorizeParam,
      [],
    )
    .option(
      "--disable-resource-parameter",
      "leave the RFC 8707 resource out of the sign-in (for providers that refuse it, e.g. Entra ID)",
    )
    .option(
      "--static-oauth-client-metadata <json|@file>",
      "client registration metadata merged over the bridge's (client_name, scope, logo_uri...)",
    );
}

/** Repeatable options whose values before a subcommand's name add to those after it. */
const ADDED_UP = new Set(["header", "headerFile", "authorizeParam"]);

/** The command's options, with those given before a subcommand's name (`--debug login`) filling in. */
function mergedOptions(command: Command): Record<string, unknown> {
  const merged = { ...command.opts() };
  const parent = command.parent;
  if (!parent) return merged;
  for (const [key, value] of Object.entries(parent.opts())) {
    if (parent.getOptionValueSource(key) !== "cli") continue;
    const addedUp = ADDED_UP.has(key);
    if (command.getOptionValueSource(key) === "cli" && !addedUp) continue;
    merged[key] = addedUp ? [...(value as string[]), ...((merged[key] as string[]) ?? [])] : value;
  }
  return merged;
}

/** Every option but the URL, checked. */
function toConnectionOptions(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  writeErr: (text: string) => void,
): Omit<BridgeOptions, "url"> {
  const allowHttp = opts.allowHttp === true;
  const headers = customHeadersOf(
    opts.header as string[],
    opts.headerFile as string[],
    env,
    (where, variable) =>
      writeErr(`chat-mcp-bridge: warning: \${${variable}} in ${where} is not set; using an empty value\n`),
  );
  const clientMetadataUrl = opts.clientMetadataUrl as string | undefined;
  const metadataUrl = clientMetadataUrl === undefined ? undefined : URL.parse(clientMetadataUrl);
  if (metadataUrl !== undefined && (metadataUrl?.protocol !== "https:" || metadataUrl.pathname === "/"))
    throw new UsageError("--client-metadata-url must be an https URL with a path");
  const clientCredentials = opts.clientCredentials === true;
  const clientPrivateKeyFile = opts.clientPrivateKey as string | undefined;
  if (clientCredentials || clientPrivateKeyFile !== undefined)
    checkClientCredentials(opts, env, clientCredentials, clientPrivateKeyFile);
  return {
    headers,
    ...assertionOptionsOf(opts, env, allowHttp),
    ...(clientCredentials ? { clientCredentials } : {}),
    ...(clientPrivateKeyFile !== undefined ? { clientPrivateKeyFile } : {}),
    callbackPort: opts.callbackPort as number | undefined,
    openBrowser: opts.browser !== false,
    deviceCode: opts.deviceCode === true,
    authTimeoutMs: opts.authTimeout as number | undefined,
    tokenStore: opts.tokenStore as TokenStoreChoice,
    allowHttp,
    debug: opts.debug === true,
    clientId: opts.clientId as string | undefined,
    clientSecret: opts.clientId ? env.CHAT_MCP_CLIENT_SECRET || undefined : undefined,
    clientMetadataUrl,
    ignoreTools: opts.ignoreTool as string[],
    readOnly: opts.readOnly === true,
    confirmTools: opts.confirmTool as string[],
    logFile: opts.logFile as string | undefined,
    silent: opts.silent === true,
    callbackHost: opts.host as string | undefined,
    resource: opts.resource as string | undefined,
    profile: opts.profile as string | undefined,
    authorizeParams: authorizeParamsOf(opts.authorizeParam as string[]),
    disableResourceParameter: opts.disableResourceParameter === true,
    clientMetadata:
      opts.staticOauthClientMetadata === undefined
        ? undefined
        : parseClientMetadataOption(opts.staticOauthClientMetadata as string),
    ...networkFlagsOf(opts, allowHttp),
    maxMessageBytes: (opts.maxMessageSize as number | undefined) ?? DEFAULT_MAX_MESSAGE_BYTES,
  };
}

function doctorTarget(raw: string, allowHttp: boolean): DoctorTarget {
  try {
    return { raw, url: parseMcpUrl(raw, allowHttp) };
  } catch (error) {
    if (error instanceof UsageError) return { raw, problem: error.message };
    throw error;
  }
}

/** An http(s) URL; plain http only to loopback unless `--allow-http`. */
function parseMcpUrl(raw: string, allowHttp: boolean): URL {
  const url = URL.parse(raw);
  if (!url)
    throw new UsageError(`"${raw}" is not a URL; pass the MCP endpoint, e.g. https://example.com/mcp`);
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new UsageError(`the MCP URL must be http(s), not ${url.protocol}`);
  if (url.username || url.password) throw new UsageError("the MCP URL must not contain credentials");
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname) && !allowHttp)
    throw new UsageError(
      `refusing plain http to ${url.host}: tokens would travel unencrypted; use https or pass --allow-http`,
    );
  return url;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Flags only the relay uses, and flags only a sign-in uses: accepted everywhere, listed where they act. */
const RELAY_ONLY_FLAGS = [
  "--ignore-tool",
  "--read-only",
  "--confirm-tool",
  "--keep-alive",
  "--ping-interval",
  "--max-message-size",
];
const SIGN_IN_FLAGS = [
  ...["--callback-port", "--no-browser", "--auth-timeout", "--host", "--device-code"],
  ...["--authorize-param", "--disable-resource-parameter", "--static-oauth-client-metadata"],
  ...["--workload-token-file", "--idp-issuer", "--idp-client-id", "--idp-id-token-file"],
  ...["--use-id-token", "--callback-path", "--auth-success-url"],
];
const HIDDEN_IN_HELP: Readonly<Record<string, readonly string[]>> = {
  login: RELAY_ONLY_FLAGS,
  logout: [...RELAY_ONLY_FLAGS, ...SIGN_IN_FLAGS],
};

/** Hides from `kind`'s help the flags that do nothing there (still accepted, as before a subcommand's name). */
function hideFlagsOf(command: Command, kind: string): Command {
  const hidden = HIDDEN_IN_HELP[kind] ?? [];
  for (const option of command.options) if (option.long && hidden.includes(option.long)) option.hideHelp();
  return command;
}

export const ENVIRONMENT_HELP = `
Environment:
  CHAT_MCP_URL           the MCP URL when none is given
  CHAT_CONFIG_DIR        where logins, locks and logs are kept (default $XDG_CONFIG_HOME/chat-mcp-bridge)
  BROWSER                the command that opens the sign-in URL (any program, such as a headless opener)
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY
                         the proxy for the server's requests, as curl reads them (loopback never uses one)
  NODE_EXTRA_CA_CERTS    a PEM file of extra root certificates (a company root, a TLS-inspecting proxy)
  CHAT_MCP_CLIENT_SECRET the secret of --client-id
  CHAT_MCP_IDP_CLIENT_SECRET
                         the secret of --idp-client-id`;
