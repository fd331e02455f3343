/** How big and how deep a message the bridge relays may be (`--max-message-size`), and how a refusal says so. */

/**
 * `--max-message-size`'s default, in MiB: below the 10 MiB a line that hosts on the MCP TypeScript SDK read (a
 * longer one ends their session with a bare "Connection closed"), so a larger answer is an error naming the flag.
 */
export const DEFAULT_MAX_MESSAGE_MIB = 8;
export const DEFAULT_MAX_MESSAGE_BYTES = DEFAULT_MAX_MESSAGE_MIB * 1024 * 1024;
export const MAX_MESSAGE_SIZE_HELP = `the largest message relayed either way, in MiB; a larger one is answered with an error (default ${DEFAULT_MAX_MESSAGE_MIB})`;
/** The largest cap accepted: V8 cannot hold a string much longer than 512 MiB. */
export const MAX_MESSAGE_MIB_LIMIT = 500;

/**
 * The deepest nesting of arrays and objects relayed. JSON.parse of a message nested millions deep takes seconds
 * and JSON.stringify of it overflows the stack; real MCP messages (JSON Schemas included) nest a few dozen deep.
 */
export const MAX_NESTING_DEPTH = 1000;

/** Ends "... was not relayed" and the like: the size, the cap, and the flag that raises it. */
export function tooLargeText(maxBytes: number, bytes?: number): string {
  const size = bytes === undefined ? "" : `${bytes} bytes, `;
  return `${size}larger than --max-message-size (${maxBytes / 1024 / 1024} MiB); start the bridge with a larger --max-message-size <MiB> to relay it`;
}

/** The message of a refusal of a message nested deeper than MAX_NESTING_DEPTH. */
export const TOO_DEEP = `nested deeper than ${MAX_NESTING_DEPTH} levels of arrays and objects, more than the bridge relays`;

/**
 * The bytes of message each array or object must come with: V8 spends 50 to 100 bytes on each (60 MB of `{"a":1},`
 * parsed to 700 MB), so a parsed message stays within a few times `--max-message-size`.
 */
const CAP_BYTES_PER_CONTAINER = 64;

/** The most arrays and objects a message may hold under a cap of `maxBytes`. */
export const maxContainers = (maxBytes: number): number => Math.floor(maxBytes / CAP_BYTES_PER_CONTAINER);

/** The message of a refusal of a message of more arrays and objects than maxContainers allows. */
export function tooManyContainersText(maxBytes: number): string {
  return `made of more than ${maxContainers(maxBytes)} arrays and objects (one per ${CAP_BYTES_PER_CONTAINER} bytes of --max-message-size, ${maxBytes / 1024 / 1024} MiB), more than the bridge parses; start the bridge with a larger --max-message-size <MiB> to relay it`;
}

/** Why JSON text is not parsed (too deep, too many containers), decided by one cheap scan before JSON.parse. */
export function jsonShapeProblem(
  text: string,
  maxBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
): string | undefined {
  const shape = jsonShape(text, MAX_NESTING_DEPTH, maxContainers(maxBytes));
  return shape === "deep" ? TOO_DEEP : shape === "many" ? tooManyContainersText(maxBytes) : undefined;
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_ARRAY = 91;
const OPEN_OBJECT = 123;
const CLOSE_ARRAY = 93;
const CLOSE_OBJECT = 125;

/** "deep" past `maxDepth` nesting, "many" past `maxCount` containers: one scan outside strings; malformed text passes. */
function jsonShape(text: string, maxDepth: number, maxCount: number): "deep" | "many" | undefined {
  // Each level and each container takes a character: a shorter text can be neither.
  if (text.length <= maxDepth && text.length <= maxCount) return undefined;
  let depth = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end === -1) return undefined;
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = end;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > maxDepth) return "deep";
      if (++count > maxCount) return "many";
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) depth--;
  }
  return undefined;
}
