/** How an upstream exchange failed: an HTTP error status from the server, or no HTTP answer at all. */
import { classifyRequestFailure } from "../../../internal/request-failure.js";

/** The server answered with an HTTP error status. */
export class RemoteHttpError extends Error {
  override readonly name = "RemoteHttpError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** No answer came: the server is down or unreachable, or its stream broke (the bridge's words in `message`). */
export class ServerUnreachable extends Error {
  override readonly name = "ServerUnreachable";
}

/** The request never got an HTTP answer: the server is down or unreachable. */
export function isNetworkError(error: unknown): boolean {
  return error instanceof ServerUnreachable || classifyRequestFailure(error) !== "not-a-request-failure";
}
