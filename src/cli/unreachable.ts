/** chat-cli's one judgement of "cannot reach the server" (the request-failure classifier's), and the hint that fits why. */
import { classifyRequestFailure } from "../internal/request-failure.js";

const NAME_NOT_RESOLVED = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME"]);
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const WHERE = "--base-url or CHAT_API_URL";

export interface Unreachable {
  message: string;
  hint: string;
}

/**
 * What to say when `error` is a request that got no answer from `baseUrl` (refused, name not resolved, reset,
 * ...), looking through the `cause` chain (the client and the sign-in wrap the failed fetch); else undefined.
 */
export function describeUnreachable(error: unknown, baseUrl: string): Unreachable | undefined {
  let failure: unknown = error;
  for (let depth = 0; depth < 6 && failure instanceof Error; depth += 1) {
    if (classifyRequestFailure(failure) !== "not-a-request-failure") return report(codeOf(failure), baseUrl);
    failure = failure.cause;
  }
  return undefined;
}

/** The system error code of a failed request: its cause's, or the one every address tried failed with. */
function codeOf(failure: Error): string | undefined {
  for (let current: unknown = failure, depth = 0; current instanceof Error && depth < 4; depth += 1) {
    const { code, errors } = current as { code?: unknown; errors?: unknown };
    if (typeof code === "string") return code;
    const first = Array.isArray(errors) ? (errors[0] as { code?: unknown } | undefined)?.code : undefined;
    if (typeof first === "string") return first;
    current = current.cause;
  }
  return undefined;
}

function report(code: string | undefined, baseUrl: string): Unreachable {
  const host = hostOf(baseUrl);
  if (code && NAME_NOT_RESOLVED.has(code)) {
    return {
      message: `cannot reach ${baseUrl}: the host name ${host} does not resolve (${code})`,
      hint: `Check the host name (${WHERE}), and this machine's network and DNS.`,
    };
  }
  const why =
    code === "ECONNREFUSED"
      ? "nothing listens there (ECONNREFUSED)"
      : `no answer (${code ?? "network error"})`;
  const hint = LOOPBACK_HOSTS.has(host)
    ? `Is the server running? Start a local one with \`chat-cli serve\`, or check the port (${WHERE}).`
    : `Is the service up, and is the URL right (${WHERE})?`;
  return { message: `cannot reach ${baseUrl}: ${why}`, hint };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}
