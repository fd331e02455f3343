/** The bridge's help beyond commander's: the environment it reads, and which flags each command lists. */
import type { Command } from "commander";

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
export function hideFlagsOf(command: Command, kind: string): Command {
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
