/** Every chat-cli command and global option as data, the one table commander's program is built from. */
// Each command's module loads in its `run`, when that command runs (as changesets does).
import type { ListOptions } from "./commands/list.js";
import type { MessagesOptions } from "./commands/messages.js";
import type { ResolveOptions } from "./commands/resolve.js";
import type { ServeOptions } from "./commands/serve.js";
import type { CliContext } from "./context.js";
import {
  OptionValueError,
  parseAuthTimeout,
  parseBaseUrl,
  parseDpopMode,
  parseLimit,
  parseMcpEra,
  parseMilliseconds,
  parseNames,
  parsePort,
  parseSeconds,
  parseTokenStore,
} from "./flag-values.js";

export { OptionValueError };

export interface OptionSpec {
  /** commander's flags string: `--json`, `--limit <n>`, `--no-browser`. */
  flags: string;
  description: string;
  parse?: (value: string) => unknown;
  defaultValue?: unknown;
}

export interface ArgumentSpec {
  /** `<chatId>`, or `<prompt...>` for one or more words. */
  name: string;
  description?: string;
}

/** A positional value as commander hands it to an action: a word, or the words of a variadic argument. */
export type Operand = string | string[];

export interface CommandSpec {
  name: string;
  description: string;
  arguments: ArgumentSpec[];
  options: OptionSpec[];
  /** Runs the command, loading its module first. */
  run(operands: Operand[], options: Record<string, unknown>, ctx: CliContext): Promise<void>;
}

/** The program's own options (besides -h and -V), recognised before and after the command name. */
export const GLOBAL_OPTIONS: OptionSpec[] = [
  {
    flags: "--base-url <url>",
    description: "service base URL (default: $CHAT_API_URL or http://127.0.0.1:8787)",
    parse: parseBaseUrl,
  },
  {
    flags: "--token <token>",
    description: "API key or access token (default: $CHAT_API_KEY, then the stored login)",
  },
  { flags: "--json", description: "print exactly the response JSON on stdout" },
  { flags: "--no-color", description: "never use colour (NO_COLOR is honoured too)" },
  { flags: "--debug", description: "details and stack traces on stderr" },
];

const chatIdArgument: ArgumentSpec = {
  name: "<chatId>",
  description: "the chat's ID (chat_…, shown by `chat-cli list`)",
};
const limitOption: OptionSpec = {
  flags: "--limit <n>",
  description: "page size, 1-100 (default 20)",
  parse: parseLimit,
};
/** A positional as one string: the words of a variadic argument joined by spaces. */
const text = (operand: Operand | undefined): string =>
  Array.isArray(operand) ? operand.join(" ") : (operand ?? "");

export const COMMANDS: CommandSpec[] = [
  {
    name: "login",
    description:
      "sign in with your browser (OAuth), or as a client with --client-credentials or --workload-token-file, and store the credentials for this base URL",
    arguments: [],
    options: [
      { flags: "--no-browser", description: "print the sign-in URL instead of opening a browser" },
      {
        flags: "--device-code",
        description:
          "sign in with a code entered in a browser on any device (OAuth device code, RFC 8628); also used by itself when no browser can open here and the server offers it",
      },
      {
        flags: "--auth-timeout <seconds>",
        description: "how long to wait for the sign-in, in a browser or with a device code (default 300)",
        parse: parseAuthTimeout,
      },
      {
        flags: "--token-store <store>",
        description: "where the credentials are kept: auto (keychain, else a 0600 file), keychain or file",
        parse: parseTokenStore,
        defaultValue: "auto",
      },
      {
        flags: "--client-credentials",
        description: "sign in as the --client-id client itself, with no browser (for CI jobs)",
      },
      {
        flags: "--client-id <id>",
        description: "the pre-registered OAuth client (its secret, if any, from $CHAT_MCP_CLIENT_SECRET)",
      },
      {
        flags: "--client-private-key <pem-file>",
        description:
          "with --client-credentials: sign private_key_jwt assertions with this key (a file only you can read)",
      },
      {
        flags: "--workload-token-file <path>",
        description:
          "sign in as --client-id with the workload identity token a platform writes to this file (Kubernetes, CI OIDC)",
      },
      {
        flags: "--callback-path <path>",
        description: "path of the OAuth callback's redirect URI (default /callback)",
      },
      {
        flags: "--auth-success-url <url>",
        description: "http(s) page the browser is sent to after a successful sign-in",
      },
    ],
    async run(_operands, opts, ctx) {
      await (await import("./commands/login.js")).login(
        {
          browser: opts.browser as boolean,
          deviceCode: opts.deviceCode === true,
          authTimeoutMs: opts.authTimeout === undefined ? undefined : (opts.authTimeout as number) * 1000,
          tokenStore: opts.tokenStore as "auto" | "keychain" | "file",
          clientCredentials: opts.clientCredentials === true,
          clientId: opts.clientId as string | undefined,
          clientPrivateKeyFile: opts.clientPrivateKey as string | undefined,
          workloadTokenFile: opts.workloadTokenFile as string | undefined,
          callbackPath: opts.callbackPath as string | undefined,
          authSuccessUrl: opts.authSuccessUrl as string | undefined,
        },
        ctx,
      );
    },
  },
  {
    name: "logout",
    description: "remove the stored credentials for this base URL",
    arguments: [],
    options: [],
    async run(_operands, _opts, ctx) {
      await (await import("./commands/logout.js")).logout({}, ctx);
    },
  },
  {
    name: "whoami",
    description: "show the account or team of the token in use and where the token came from",
    arguments: [],
    options: [],
    async run(_operands, _opts, ctx) {
      await (await import("./commands/whoami.js")).whoami({}, ctx);
    },
  },
  {
    name: "create",
    description: "create a chat from a prompt and show the assistant's answer state",
    arguments: [{ name: "<prompt...>", description: "the first message" }],
    options: [{ flags: "--title <title>", description: "chat title (default: the start of the prompt)" }],
    async run([prompt], opts, ctx) {
      const title = opts.title as string | undefined;
      await (await import("./commands/create.js")).create(
        { prompt: text(prompt), ...(title ? { title } : {}) },
        ctx,
      );
    },
  },
  {
    name: "list",
    description: "list chats, newest-updated first",
    arguments: [],
    options: [
      { flags: "--topic <text>", description: "only chats whose title or messages mention this" },
      limitOption,
      { flags: "--all", description: "every chat, all pages" },
    ],
    async run(_operands, opts, ctx) {
      await (await import("./commands/list.js")).list(opts as ListOptions, ctx);
    },
  },
  {
    name: "get",
    description: "show a chat: URL, hosting project and what it waits for",
    arguments: [chatIdArgument],
    options: [{ flags: "--web", description: "open the chat in the browser" }],
    async run([chatId], opts, ctx) {
      await (await import("./commands/get.js")).get(
        { ...(opts as { web?: boolean }), chatId: text(chatId) },
        ctx,
      );
    },
  },
  {
    name: "messages",
    description: "list a chat's messages, newest first",
    arguments: [chatIdArgument],
    options: [limitOption, { flags: "--all", description: "every message, all pages" }],
    async run([chatId], opts, ctx) {
      await (await import("./commands/messages.js")).messages(
        { ...(opts as Omit<MessagesOptions, "chatId">), chatId: text(chatId) },
        ctx,
      );
    },
  },
  {
    name: "message",
    description: "show one message with its parts",
    arguments: [chatIdArgument, { name: "<messageId>" }],
    options: [],
    async run([chatId, messageId], _opts, ctx) {
      await (await import("./commands/message.js")).message(
        { chatId: text(chatId), messageId: text(messageId) },
        ctx,
      );
    },
  },
  {
    name: "send",
    description: "send a message and show the assistant's reply (rejects any pending request)",
    arguments: [chatIdArgument, { name: "<text...>", description: "the message" }],
    options: [],
    async run([chatId, words], _opts, ctx) {
      await (await import("./commands/send.js")).send({ chatId: text(chatId), text: text(words) }, ctx);
    },
  },
  {
    name: "pending",
    description: "show what the latest assistant message waits for, and whether the chat has a hostProjectId",
    arguments: [chatIdArgument],
    options: [],
    async run([chatId], _opts, ctx) {
      await (await import("./commands/pending.js")).pending({ chatId: text(chatId) }, ctx);
    },
  },
  {
    name: "resolve",
    description: "resolve what the chat waits for (with no flag on a terminal: show it and ask)",
    arguments: [chatIdArgument],
    options: [
      {
        flags: "--integrations <a,b>",
        description:
          "confirm these integrations (and MCP presets) as connected; must match the request, whose presets go with it",
        parse: parseNames,
      },
      {
        flags: "--connected",
        description: "confirm exactly the requested integrations and MCP presets as connected",
      },
      { flags: "--reject", description: "reject the integration request" },
      { flags: "--approve", description: "approve the pending script permissions, unchanged" },
      { flags: "--task <json|@file>", description: "send this task as is (JSON, or @path to a JSON file)" },
    ],
    async run([chatId], opts, ctx) {
      await (await import("./commands/resolve.js")).resolve(
        { ...(opts as Omit<ResolveOptions, "chatId">), chatId: text(chatId) },
        ctx,
      );
    },
  },
  {
    name: "preview",
    description: "print the chat's preview URL",
    arguments: [chatIdArgument],
    options: [{ flags: "--open", description: "open the preview in the browser" }],
    async run([chatId], opts, ctx) {
      await (await import("./commands/preview.js")).preview(
        { ...(opts as { open?: boolean }), chatId: text(chatId) },
        ctx,
      );
    },
  },
  {
    name: "serve",
    description: "run the reference server locally and print its URLs, accounts and dev API keys",
    arguments: [],
    options: [
      {
        flags: "--port <port>",
        description: "port to listen on (0 picks a free one)",
        parse: parsePort,
        defaultValue: 8787,
      },
      { flags: "--host <host>", description: "interface to listen on", defaultValue: "127.0.0.1" },
      {
        flags: "--auto-approve <slug>",
        description: "approve OAuth sign-ins for this account or team without a consent page",
      },
      { flags: "--data <file>", description: "keep the server's data in this JSON file" },
      {
        flags: "--assistant-delay <ms>",
        description: "make the scripted assistant take this long to answer (to try long waits)",
        parse: parseMilliseconds,
      },
      {
        flags: "--token-ttl <s>",
        description: "OAuth access tokens expire after this many seconds (to exercise refresh)",
        parse: parseSeconds,
      },
      {
        flags: "--mcp-era <era>",
        description:
          "MCP protocol eras /mcp serves: both (default), modern (2026-07-28) or legacy (2025-11-25)",
        parse: parseMcpEra,
        defaultValue: "both",
      },
      {
        flags: "--dpop <mode>",
        description: "DPoP-bound tokens (RFC 9449): allowed (default), required or off",
        parse: parseDpopMode,
      },
      {
        flags: "--public-url <url>",
        description: "base URL for links and OAuth metadata when the server sits behind a proxy",
      },
      {
        flags: "--oauth-config <file>",
        description:
          "a JSON file (yours alone) of oauthClients, trustedWorkloadIssuers, trustedEnterpriseIdps and referenceIdp",
      },
    ],
    async run(_operands, opts, ctx) {
      await (await import("./commands/serve.js")).serve(opts as unknown as ServeOptions, ctx);
    },
  },
];
