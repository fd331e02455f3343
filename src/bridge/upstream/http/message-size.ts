/** The largest message either upstream relays from the server, and how a larger one is described. */
import { MAX_LINE_BYTES } from "../../stdio/line-splitter.js";

/** The largest message relayed from the server: the same cap as a line from the client. */
export const MAX_MESSAGE_BYTES = MAX_LINE_BYTES;
/** Ends "the server's answer (...) was not relayed" and the like. */
export const TOO_LARGE = `larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB (${MAX_MESSAGE_BYTES} bytes), the most the bridge relays`;
