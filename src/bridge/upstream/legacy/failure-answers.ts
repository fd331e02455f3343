/** How the legacy upstream answers a client message the server could not take: which failures are answered at once, and with what. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describeNetworkFailure, isLastingNetworkFailure } from "../../../internal/network-errors.js";
import { requestNeverSent } from "../../../internal/request-failure.js";
import { type BridgeLog, describeError, describeMessage } from "../../log/log.js";
import { isRequest } from "../../messages/jsonrpc.js";
import { wrongEndpointMessage } from "../http/endpoint-check.js";
import { isNetworkError, outcomeUnknownMessage, type RemoteHttpError } from "../http/http-exchange.js";
import type { PendingRequests, ResendPolicy } from "./pending-requests.js";
import { isSessionGone } from "./session.js";

export interface FailureAnswersOptions {
  url: URL;
  log: BridgeLog;
  /** The table each request is answered through, exactly once. */
  pending: PendingRequests;
  /** Says which requests must not run twice: those are answered "outcome unknown" rather than sent again. */
  resendPolicy: ResendPolicy;
}

export class FailureAnswers {
  readonly #options: FailureAnswersOptions;
  /** Lasting failures already logged (see `answeredAsLastingFailure`). */
  readonly #loggedFailures = new Set<string>();

  constructor(options: FailureAnswersOptions) {
    this.#options = options;
  }

  /** An error as the user reads it: a proxy or certificate problem with what to do, else its short description. */
  describe(error: unknown): string {
    return describeNetworkFailure(error, this.#options.url) ?? describeError(error);
  }

  /** Answers a request with a bridge error (a notification cannot be answered: the log says it was lost). */
  answerWithError(message: JSONRPCMessage, text: string): void {
    if (!isRequest(message)) {
      this.#options.log.info(`could not deliver ${describeMessage(message)}: ${text}`);
      return;
    }
    this.#options.pending.answerWithError(message.id, text);
  }

  /** Answers every request the server accepted (and can no longer answer) with `text`. */
  failDelivered(text: string): void {
    this.#options.pending.failDelivered(text);
  }

  /** A failure that waiting will not cure is answered at once (true when it was); else it is worth a retry. */
  answeredAsIncurable(message: JSONRPCMessage, error: unknown): boolean {
    if (this.answeredAsLastingFailure(message, error)) return true;
    if (this.answeredAsOutcomeUnknown(message, error)) return true;
    if (isSessionGone(error) || isNetworkError(error)) return false;
    this.answerWithError(message, `chat-mcp-bridge: ${this.describe(error)}`);
    return true;
  }

  /**
   * A failure that waiting will not cure (a refusing proxy, an untrusted certificate): the request is answered
   * at once with what to do, and the log says it once, not once per request.
   */
  answeredAsLastingFailure(message: JSONRPCMessage, error: unknown): boolean {
    if (!isLastingNetworkFailure(error)) return false;
    const text = this.describe(error);
    if (!this.#loggedFailures.has(text)) {
      this.#loggedFailures.add(text);
      this.#options.log.info(text);
    }
    this.answerWithError(message, `chat-mcp-bridge: ${text}`);
    return true;
  }

  /**
   * The connection broke after a request that must not run twice was written: the server may have run it.
   * It is answered with an error saying so, instead of being sent again.
   */
  answeredAsOutcomeUnknown(message: JSONRPCMessage, error: unknown): boolean {
    if (!isNetworkError(error) || requestNeverSent(error) || this.#options.resendPolicy.isRepeatable(message))
      return false;
    this.answerWithError(
      message,
      `chat-mcp-bridge: ${outcomeUnknownMessage(this.#options.url.origin, this.describe(error))}`,
    );
    return true;
  }

  /** `initialize` answered 404: the URL is not the MCP endpoint; say which one is, when a nearby URL answers as one. */
  async answerWrongEndpoint(message: JSONRPCMessage, error: RemoteHttpError): Promise<void> {
    this.#options.log.debug(`initialize: ${describeError(error)}`);
    const text = await wrongEndpointMessage(this.#options.url, "it answered initialize with HTTP 404");
    this.#options.log.info(text);
    this.answerWithError(message, `chat-mcp-bridge: ${text}`);
  }
}
