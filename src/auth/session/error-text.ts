/** Failure text a session may show: redacted and visible-safe, and the network code of a request that got no answer. */
import { redactForTerminal } from "../../internal/redact.js";
import { classifyRequestFailure } from "../../internal/request-failure.js";

// Error bodies of token and registration endpoints can echo what was sent to them (and carry terminal escapes):
// every message is redacted and made visible-safe.
export function messageOf(error: unknown): string {
  return redactForTerminal(error instanceof Error ? error.message : String(error));
}

/** The error code (ECONNREFUSED, ENOTFOUND…) of a request that got no HTTP answer, as the one request-failure judge sees it. */
export function networkErrorCode(error: unknown): string | undefined {
  // The failed request may be wrapped ("Could not load the authorization server metadata of ...": its cause).
  for (let failure = error, depth = 0; failure instanceof Error && depth < 5; depth++) {
    if (classifyRequestFailure(failure) !== "not-a-request-failure") {
      const code = (failure as { cause?: { code?: unknown } }).cause?.code;
      return typeof code === "string" ? code : "no answer";
    }
    failure = failure.cause;
  }
  return undefined;
}
