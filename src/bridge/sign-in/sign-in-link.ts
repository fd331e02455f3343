/** Where a host is shown the sign-in link while signed out: its URL dialog (elicitation), a modern call's sign-in round, its log when it asked for one. */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import type { SignInPrompt } from "../../auth/index.js";
import type { BridgeLog } from "../log/log.js";
import {
  BridgeRequestIds,
  isJsonObject as isObject,
  isRequest,
  type JsonObject as Json,
  requestKey,
} from "../messages/jsonrpc.js";
import { clientFromEnvelope, hasModernEnvelope, type ToClient } from "../messages/request-model.js";
import { SignInRounds, signInElicitation } from "./signed-out-messages.js";

export class HostSignInLink {
  readonly rounds = new SignInRounds();
  /** Where the person is asked to go now, if a sign-in has shown it. */
  prompt: SignInPrompt | undefined;
  #elicitedPrompt: SignInPrompt | undefined;
  readonly #elicitations = new Map<string, string>();
  readonly #elicitationIds = new BridgeRequestIds("sign-in");
  #legacyHost = false;
  #opensUrls = false;
  #initialized = false;
  /** The host's `clientInfo`, from its `initialize` or its first modern request: how long it waits (host-patience). */
  hostInfo: Json | undefined;
  /** The host asked for log messages (`logging/setLevel`): only then is `notifications/message` sent to it. */
  #takesLogs = false;

  constructor(
    private readonly toClient: ToClient,
    private readonly log: BridgeLog,
  ) {}

  get legacyHost(): boolean {
    return this.#legacyHost;
  }

  /** A legacy host's `initialize`: whether it opens URLs in its own dialog (URL-mode elicitation). */
  initialized(capabilities: Json): void {
    this.#legacyHost = true;
    this.#opensUrls = isObject(capabilities.elicitation) && isObject(capabilities.elicitation.url);
  }

  /** What the host tells of itself: its name, and whether it takes log messages. */
  observe(message: JSONRPCMessage): void {
    if (!isRequest(message)) return;
    const params = isObject(message.params) ? message.params : {};
    if (message.method === "initialize" && isObject(params.clientInfo)) this.hostInfo = params.clientInfo;
    else if (hasModernEnvelope(params)) this.hostInfo ??= clientFromEnvelope(params).clientInfo as Json;
    if (message.method !== "logging/setLevel" || this.#takesLogs) return;
    this.#takesLogs = true;
    // Asked for after the link was shown: it hears of it now.
    if (this.prompt) this.notify(this.prompt.message);
  }

  /** The host's `notifications/initialized`: from now on it may be asked and told. */
  ready(): void {
    this.#initialized = true;
    if (this.prompt) this.notify(this.prompt.message);
    this.offerUrl();
  }

  /** A link or code the person must open themselves (no browser opened on it), not offered in the host's own dialog. */
  mustActOutsideHost(): boolean {
    const prompt = this.prompt;
    return prompt !== undefined && !prompt.browserOpened && this.#elicitedPrompt !== prompt;
  }

  forget(): void {
    this.prompt = undefined;
    this.#elicitedPrompt = undefined;
  }

  /** The host's answer to a sign-in link it was shown: true when it was one (nothing for the server). */
  answered(message: JSONRPCMessage): boolean {
    const key = requestKey((message as { id: string | number }).id);
    if (!this.#elicitations.has(key)) return false;
    this.#elicitations.delete(key);
    const result = (message as Json).result;
    this.log.debug(
      `the client answered the sign-in link with ${String(isObject(result) ? result.action : "error")}`,
    );
    return true;
  }

  /** Signed in: every URL dialog still open is told it is done. */
  completed(): void {
    for (const [, elicitationId] of this.#elicitations) {
      this.toClient({
        jsonrpc: "2.0",
        method: "notifications/elicitation/complete",
        params: { elicitationId },
      } as JSONRPCMessage);
    }
  }

  /**
   * The host's log (`notifications/message`), only for a legacy host that asked for log messages
   * (`logging/setLevel`): some hosts fail on a notification they did not ask for (the Vercel AI SDK).
   */
  notify(text: string): void {
    if (!this.#legacyHost || !this.#initialized || !this.#takesLogs) return;
    this.toClient({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "warning", logger: "chat-mcp-bridge", data: text },
    } as JSONRPCMessage);
  }

  /**
   * URL-mode elicitation (MCP 2025-11-25): the host's own "open this link" dialog. Only for a URL no browser was
   * opened on: the one-time page must be opened by one browser only.
   */
  offerUrl(): void {
    const prompt = this.prompt;
    if (!prompt || prompt.browserOpened || !this.#opensUrls || !this.#initialized) return;
    if (this.#elicitedPrompt === prompt) return;
    this.#elicitedPrompt = prompt;
    const id = this.#elicitationIds.next();
    const elicitationId = randomUUID();
    this.#elicitations.set(requestKey(id), elicitationId);
    this.toClient(signInElicitation(id, elicitationId, prompt));
  }
}
