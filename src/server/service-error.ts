/** The reference server's one failure type, below the store and the service so neither imports the other for it. */
import type { ErrorCode } from "../wire/index.js";

/** A failure of the service, mapped to the service's error body by REST and to `isError` by MCP. */
export class ServiceError extends Error {
  override readonly name = "ServiceError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
