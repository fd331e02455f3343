/** The one wording, for both eras, of a call whose connection broke after it was sent: it may or may not have run. */

/** The error text (without the `chat-mcp-bridge: ` prefix) for a call that was sent once and not sent again. */
export function outcomeUnknownMessage(origin: string, reason: string): string {
  return (
    `the connection to ${origin} broke after this call was sent (${reason}), so the server may or may not ` +
    "have run it. It was not sent again, so it cannot run twice: check whether it took effect before calling it again."
  );
}
