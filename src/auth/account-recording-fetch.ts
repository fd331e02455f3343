/** The account or team a token response names in its extra `account` parameter (RFC 6749 §5.1), which the SDK's parsing drops. */
import { readBoundedText } from "../internal/bounded-body.js";

/** A slug as the chat service spells them; anything else is ignored rather than stored or shown. */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** A token response is a few hundred bytes; a bigger body is not read past this. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * Wraps the fetch of one token request (code exchange or refresh) so the `account` of its successful JSON
 * answer can be read afterwards; the SDK still reads and validates the answer itself.
 */
export function accountRecordingFetch(fetchFn: typeof fetch): {
  fetchFn: typeof fetch;
  account: () => string | undefined;
} {
  let account: string | undefined;
  const recording = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const response = await fetchFn(input, init);
    if (response.ok) {
      const text = readBoundedText(response.clone(), {
        maxBytes: MAX_BODY_BYTES,
        what: "the token response",
      });
      account = accountOf(await text.catch(() => undefined));
    }
    return response;
  };
  return { fetchFn: recording as typeof fetch, account: () => account };
}

function accountOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const body: unknown = JSON.parse(text);
    const value =
      typeof body === "object" && body !== null ? (body as { account?: unknown }).account : undefined;
    return typeof value === "string" && SLUG.test(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
