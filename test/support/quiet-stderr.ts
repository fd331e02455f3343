/** A stderr writer that drops the browser sign-in notice: in a test run it is noise, on a user's terminal it is not. */

const NOTICE =
  /^(Opening (your browser to sign in at \S+|the sign-in URL \(\S+\) with the \$BROWSER command)\. If .*, visit this URL:\n|Open this URL to sign in at \S+: )/;
const URL_LINE = /^ {2}\S+\n$/;

// biome-ignore lint/suspicious/noExplicitAny: the rest of stream.write's overloads (encoding, callback) pass through.
type Write = (chunk: string | Uint8Array, ...rest: any[]) => boolean;

/** `write` without the sign-in notice lines (the notice, then the indented URL line that follows it). */
export function quietStderrWrite(write: Write): Write {
  let urlLineNext = false;
  return (chunk, ...rest) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    if (NOTICE.test(text)) {
      urlLineNext = text.startsWith("Opening");
      return true;
    }
    if (urlLineNext && URL_LINE.test(text)) {
      urlLineNext = false;
      return true;
    }
    urlLineNext = false;
    return write(chunk, ...rest);
  };
}
