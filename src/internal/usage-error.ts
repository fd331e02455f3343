/** A mistake in how a bin was called (a bad flag value, a missing choice): both bins exit 2 with its message. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The exit code of every usage mistake. */
  readonly exitCode = 2;
  /** What to do instead, printed on a second line when set. */
  readonly hint: string | undefined;

  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
  }
}
