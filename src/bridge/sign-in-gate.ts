/** The host is never kept waiting by a sign-in: signed out, the bridge answers `initialize` and lists itself, signs in beside them, then hands over to the relay and tells the host its lists changed. */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { SignInPrompt } from "../auth/index.js";
import type { EraRelay } from "./era-router.js";
import { isJsonObject as isObject, isRequest, isResponse, type JsonObject as Json } from "./jsonrpc.js";
import { type BridgeLog, describeError } from "./log.js";
import { BridgeRequestIds, requestKey } from "./request-ids.js";
import { hasModernEnvelope, type ToClient } from "./request-model.js";
import {
  acknowledgedListen,
  emptyListResult,
  isListMethod,
  listChangeNotifications,
  listenAcknowledgment,
  SignInRounds,
  signedOutAnswer,
  signedOutText,
  signInElicitation,
} from "./signed-out-messages.js";
import { signedOutInitializeResult } from "./translate/discover.js";

/**
 * How long the first messages may wait for a sign-in that needs no person (a server without auth, a login saved
 * by another process, an SSO session that approves at once): at most this long, and this much once a browser
 * has been opened; with no browser to open, or once the sign-in failed, they are answered at once.
 */
export const SIGN_IN_GRACE_MS = 10_000;
export const OPENED_BROWSER_GRACE_MS = 2000;

export interface SignInGateOptions {
  /** The relay every message goes to once signed in (the era router). */
  relay: EraRelay;
  toClient: ToClient;
  log: BridgeLog;
  serverUrl: string;
  /** Whether a usable login is stored now (read at the first message that needs the server). */
  signedIn(): Promise<boolean>;
  /** The server's remembered 2026-07-28 DiscoverResult, if any: the signed-out `initialize` answers from it. */
  rememberedDiscover(): Promise<Json | undefined>;
  /** Runs one sign-in to its end: resolves once signed in, rejects with why (SignInUrlRefused: the URL's fault). */
  signIn(): Promise<void>;
  /** How long a `tools/call` (or another request that needs the server) waits for the sign-in before it is answered. */
  callWaitMs: number;
  /** The terminal command that signs in, named in what the host is told. */
  loginCommand: string;
}

interface HeldCall {
  message: Extract<JSONRPCMessage, { id: RequestId; method: string }>;
  timer: NodeJS.Timeout;
}

export class SignInGate {
  readonly #options: SignInGateOptions;
  #state: "unknown" | "checking" | "grace" | "signed-out" | "open" = "unknown";
  /** Arrived while the stored login was read, or while a sign-in that may need no person runs. */
  #early: JSONRPCMessage[] = [];
  #graceTimer: NodeJS.Timeout | undefined;
  /** What the relay gets once signed in, in the order the host sent it. */
  #replay: JSONRPCMessage[] = [];
  /** Requests the gate answered itself whose relay answer the host must not see again (its `initialize`). */
  readonly #swallow = new Set<string>();
  readonly #heldCalls = new Map<string, HeldCall>();
  #discover: Json | undefined;
  #hostOpensUrls = false;
  #hostInitialized = false;
  #legacyHost = false;
  readonly #listed = new Set<string>();
  readonly #listens: Array<{ id: RequestId; filter: Json }> = [];
  /** Listens the bridge acknowledged itself: the server's own acknowledgment later goes no further. */
  readonly #acknowledged = new Set<string>();
  readonly #signInRounds = new SignInRounds();
  #prompt: SignInPrompt | undefined;
  #elicitedPrompt: SignInPrompt | undefined;
  readonly #elicitations = new Map<string, string>();
  readonly #elicitationIds = new BridgeRequestIds("sign-in");
  #signingIn: Promise<void> | undefined;
  #lastFailure: Error | undefined;
  /** True while the messages held during the grace are answered after the sign-in failed. */
  #failedJustNow = false;

  constructor(options: SignInGateOptions) {
    this.#options = options;
  }

  fromClient(message: JSONRPCMessage): void {
    if (this.#state === "open") {
      // The host's answer to a sign-in link it was shown while signed out: nothing for the server.
      if (isResponse(message) && this.#elicitations.delete(requestKey(message.id))) return;
      this.#options.relay.fromClient(message);
      return;
    }
    // A probing host's discover never signs in and never waits for the login to be read: the router answers it.
    if (isRequest(message) && message.method === "server/discover" && this.#state !== "signed-out") {
      this.#options.relay.fromClient(message);
      return;
    }
    if (this.#state === "signed-out") {
      this.#handle(message);
      return;
    }
    this.#early.push(message);
    if (this.#state === "unknown") void this.#check();
  }

  /** What the relay sends the host, less the answers to requests the gate already answered. */
  toClient: ToClient = (message, raw, related) => {
    // The server's answer to the host's initialize, and its acknowledgment of a listen: already given.
    if (isResponse(message) && this.#swallow.delete(requestKey(message.id))) return;
    const listen = acknowledgedListen(message);
    if (listen !== undefined && this.#acknowledged.delete(requestKey(listen))) return;
    this.#options.toClient(message, raw, related);
  };

  /** A sign-in shows the person where to go: the host hears of it too (its URL dialog, its log). */
  showPrompt(prompt: SignInPrompt): void {
    this.#prompt = prompt;
    if (this.#state === "grace") {
      clearTimeout(this.#graceTimer);
      this.#graceTimer = setTimeout(
        () => this.#endGrace(),
        prompt.browserOpened ? OPENED_BROWSER_GRACE_MS : 0,
      );
      return;
    }
    if (this.#state !== "signed-out") return;
    this.#notifyHost(prompt.message);
    this.#offerUrl();
  }

  async close(timeoutMs?: number): Promise<void> {
    for (const held of this.#heldCalls.values()) clearTimeout(held.timer);
    clearTimeout(this.#graceTimer);
    await this.#options.relay.close(timeoutMs);
  }

  async #check(): Promise<void> {
    this.#state = "checking";
    const [signedIn, discover] = await Promise.all([
      // A store that cannot be read is the relay's to report: pass through.
      this.#options.signedIn().catch(() => true),
      this.#options.rememberedDiscover().catch(() => undefined),
    ]);
    this.#discover = discover;
    if (signedIn) {
      this.#state = "open";
      for (const message of this.#early.splice(0)) this.#options.relay.fromClient(message);
      return;
    }
    this.#state = "grace";
    this.#graceTimer = setTimeout(() => this.#endGrace(), SIGN_IN_GRACE_MS);
    this.#startSignIn();
  }

  /** The sign-in needs the person (or failed): the bridge answers what the client sent meanwhile itself. */
  #endGrace(): void {
    if (this.#state !== "grace") return;
    clearTimeout(this.#graceTimer);
    this.#state = "signed-out";
    this.#options.log.debug("not signed in: the bridge answers the client itself until the sign-in ends");
    for (const message of this.#early.splice(0)) this.#handle(message);
  }

  #handle(message: JSONRPCMessage): void {
    if (isResponse(message)) {
      const elicitationId = this.#elicitations.get(requestKey(message.id));
      if (elicitationId) {
        this.#elicitations.delete(requestKey(message.id));
        const action = isObject((message as Json).result)
          ? ((message as Json).result as Json).action
          : "error";
        this.#options.log.debug(`the client answered the sign-in link with ${String(action)}`);
      }
      return;
    }
    if (!isRequest(message)) {
      this.#handleNotification(message);
      return;
    }
    const { id, method } = message;
    const params = isObject(message.params) ? message.params : {};
    const modern = hasModernEnvelope(params);
    if (method === "initialize") {
      this.#initialize(message);
      return;
    }
    if (method === "server/discover") {
      this.#options.relay.fromClient(message);
      return;
    }
    if (method === "ping") {
      this.#answer(id, {});
      return;
    }
    if (isListMethod(method)) {
      this.#listed.add(method);
      this.#startSignIn();
      this.#answer(id, emptyListResult(method, modern));
      return;
    }
    if (method === "subscriptions/listen") {
      const filter = isObject(params.notifications) ? params.notifications : {};
      this.#listens.push({ id, filter });
      this.#replay.push(message);
      // Acknowledged at once (a host waits for it): the list changes are the bridge's to announce until signed in.
      this.#acknowledged.add(requestKey(id));
      this.#options.toClient(listenAcknowledgment(id, filter));
      this.#startSignIn();
      return;
    }
    if (method === "logging/setLevel") {
      this.#replay.push(message);
      this.#swallow.add(requestKey(id));
      this.#answer(id, {});
      return;
    }
    this.#holdCall(message);
  }

  #handleNotification(message: JSONRPCMessage): void {
    const { method, params } = message as { method: string; params?: unknown };
    if (method === "notifications/cancelled" && isObject(params)) {
      const requestId = params.requestId;
      if (typeof requestId === "string" || typeof requestId === "number") {
        const held = this.#heldCalls.get(requestKey(requestId));
        if (held) {
          clearTimeout(held.timer);
          this.#heldCalls.delete(requestKey(requestId));
          this.#replay = this.#replay.filter((queued) => queued !== held.message);
          return;
        }
      }
    }
    this.#replay.push(message);
    if (method === "notifications/initialized") {
      this.#hostInitialized = true;
      if (this.#prompt) this.#notifyHost(this.#prompt.message);
      this.#offerUrl();
    }
  }

  /**
   * A legacy host's `initialize`: answered by the bridge (the remembered server's face, else its own, with list
   * changes declared); the server gets it once signed in, and its answer goes no further.
   */
  #initialize(message: HeldCall["message"]): void {
    const params = isObject(message.params) ? message.params : {};
    const capabilities = isObject(params.capabilities) ? params.capabilities : {};
    this.#legacyHost = true;
    this.#hostOpensUrls = isObject(capabilities.elicitation) && isObject(capabilities.elicitation.url);
    this.#replay.push(message);
    this.#swallow.add(requestKey(message.id));
    this.#answer(
      message.id,
      signedOutInitializeResult(params.protocolVersion, this.#options.serverUrl, this.#discover),
    );
    this.#startSignIn();
  }

  /** A request that needs the server: it waits for the sign-in within the host's patience, then says what to do. */
  #holdCall(original: HeldCall["message"]): void {
    // The sign-in that just failed is the answer; a later call starts a new one.
    if (this.#failedJustNow) {
      this.#answerSignedOut(original);
      return;
    }
    let message = original;
    const params = isObject(message.params) ? message.params : {};
    if (message.method === "tools/call" && hasModernEnvelope(params)) {
      const retried = this.#signInRounds.after(params);
      if (retried) message = { ...message, params: retried };
      else if (this.#prompt && this.#signInRounds.canAsk(params, this.#prompt)) {
        this.#answer(message.id, this.#signInRounds.ask(this.#prompt));
        return;
      }
    }
    this.#replay.push(message);
    const key = requestKey(message.id);
    const timer = setTimeout(() => {
      this.#heldCalls.delete(key);
      this.#replay = this.#replay.filter((queued) => queued !== message);
      this.#answerSignedOut(message);
    }, this.#options.callWaitMs);
    this.#heldCalls.set(key, { message, timer });
    this.#startSignIn();
  }

  #startSignIn(): void {
    if (this.#signingIn || this.#failedJustNow) return;
    this.#lastFailure = undefined;
    const running = this.#options.signIn();
    this.#signingIn = running;
    running.then(
      () => this.#open(),
      (error: unknown) => this.#failed(error),
    );
  }

  /** Signed in: the relay takes over, gets what the host sent meanwhile, and the host hears its lists changed. */
  #open(): void {
    this.#signingIn = undefined;
    if (this.#state === "open") return;
    if (this.#state === "grace") {
      // Signed in without the person (or no sign-in needed): everything goes to the server as it was sent.
      clearTimeout(this.#graceTimer);
      this.#state = "open";
      for (const message of this.#early.splice(0)) this.#options.relay.fromClient(message);
      return;
    }
    this.#options.log.info(`Signed in to ${this.#options.serverUrl}.`);
    this.#state = "open";
    for (const held of this.#heldCalls.values()) clearTimeout(held.timer);
    this.#heldCalls.clear();
    const replay = this.#replay;
    this.#replay = [];
    for (const message of replay) this.#options.relay.fromClient(message);
    for (const [, elicitationId] of this.#elicitations) {
      this.#options.toClient({
        jsonrpc: "2.0",
        method: "notifications/elicitation/complete",
        params: { elicitationId },
      } as JSONRPCMessage);
    }
    this.#announceListChanges();
  }

  #announceListChanges(): void {
    const host = { legacy: this.#legacyHost, listed: this.#listed, listens: this.#listens };
    for (const message of listChangeNotifications(host)) this.#options.toClient(message);
  }

  #failed(error: unknown): void {
    this.#signingIn = undefined;
    if (this.#state === "open") return;
    this.#lastFailure = error instanceof Error ? error : new Error(String(error));
    this.#prompt = undefined;
    this.#elicitedPrompt = undefined;
    this.#options.log.info(`Sign-in to ${this.#options.serverUrl} did not complete: ${describeError(error)}`);
    this.#notifyHost(this.#signedOutText(undefined));
    this.#failedJustNow = true;
    this.#endGrace();
    this.#failedJustNow = false;
    for (const [key, held] of this.#heldCalls) {
      clearTimeout(held.timer);
      this.#heldCalls.delete(key);
      this.#replay = this.#replay.filter((queued) => queued !== held.message);
      this.#answerSignedOut(held.message);
    }
  }

  #signedOutText(tool: string | undefined): string {
    const { serverUrl, loginCommand } = this.#options;
    return signedOutText({
      serverUrl,
      loginCommand,
      lastFailure: this.#lastFailure,
      prompt: this.#prompt,
      tool,
    });
  }

  #answerSignedOut(message: HeldCall["message"]): void {
    const params = isObject(message.params) ? message.params : {};
    const tool = message.method === "tools/call" && typeof params.name === "string" ? params.name : undefined;
    const text = this.#signedOutText(tool);
    this.#options.toClient(signedOutAnswer(message.id, message.method, text, hasModernEnvelope(params)));
  }

  /** The host's log (`notifications/message`), for hosts that show it; a legacy host hears it once initialized. */
  #notifyHost(text: string): void {
    if (!this.#legacyHost || !this.#hostInitialized) return;
    this.#options.toClient({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "warning", logger: "chat-mcp-bridge", data: text },
    } as JSONRPCMessage);
  }

  /**
   * URL-mode elicitation (MCP 2025-11-25): the host's own "open this link" dialog. Only for a URL no browser was
   * opened on: the one-time page must be opened by one browser only.
   */
  #offerUrl(): void {
    const prompt = this.#prompt;
    if (!prompt || prompt.browserOpened || !this.#hostOpensUrls || !this.#hostInitialized) return;
    if (this.#elicitedPrompt === prompt) return;
    this.#elicitedPrompt = prompt;
    const id = this.#elicitationIds.next();
    const elicitationId = randomUUID();
    this.#elicitations.set(requestKey(id), elicitationId);
    this.#options.toClient(signInElicitation(id, elicitationId, prompt));
  }

  #answer(id: RequestId, result: Json): void {
    this.#options.toClient({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  }
}
