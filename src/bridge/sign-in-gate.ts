/** The host is never held past its patience by a sign-in: signed out, the bridge answers `initialize` itself, holds the first lists while a sign-in may end in time, then hands over to the relay. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { SignInPrompt } from "../auth/index.js";
import type { EraRelay } from "./era-router.js";
import { listWaitMs } from "./host-patience.js";
import { isJsonObject as isObject, isRequest, isResponse, type JsonObject as Json } from "./jsonrpc.js";
import { type BridgeLog, describeError } from "./log.js";
import { requestKey } from "./request-ids.js";
import { hasModernEnvelope, type ToClient } from "./request-model.js";
import { HostSignInLink } from "./sign-in-link.js";
import {
  acknowledgedListen,
  emptyListResult,
  isListMethod,
  listChangeNotifications,
  listenAcknowledgment,
  queueFullAnswer,
  signedOutAnswer,
  signedOutText,
} from "./signed-out-messages.js";
import { HeldRequests, SignedOutQueue } from "./signed-out-queue.js";
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
  /** How long a list may be held for the sign-in (default: by the host, `listWaitMs`). */
  listWaitMs?: number | undefined;
}

type HostRequest = Extract<JSONRPCMessage, { id: RequestId; method: string }>;

export class SignInGate {
  readonly #options: SignInGateOptions;
  #state: "unknown" | "checking" | "grace" | "signed-out" | "open" = "unknown";
  /** Arrived while the stored login was read, or while a sign-in that may need no person runs. */
  #early: SignedOutQueue;
  #graceTimer: NodeJS.Timeout | undefined;
  /** What the relay gets once signed in, in the order the host sent it. */
  #replay: SignedOutQueue;
  /** Lists held for the sign-in, each until its host's patience runs out (timed from its arrival). */
  readonly #held = new HeldRequests();
  /** The lists the host got empty: a list change follows the sign-in for these only. */
  readonly #answeredEmpty = new Set<string>();
  /** Requests the gate answered itself whose relay answer the host must not see again (its `initialize`). */
  readonly #swallow = new Set<string>();
  #discover: Json | undefined;
  readonly #listens: Array<{ id: RequestId; filter: Json }> = [];
  /** Listens the bridge acknowledged itself: the server's own acknowledgment later goes no further. */
  readonly #acknowledged = new Set<string>();
  readonly #link: HostSignInLink;
  #signingIn: Promise<void> | undefined;
  #lastFailure: Error | undefined;
  /** True while the messages held during the grace are answered after the sign-in failed. */
  #failedJustNow = false;

  constructor(options: SignInGateOptions) {
    this.#options = options;
    this.#link = new HostSignInLink(options.toClient, options.log);
    this.#early = new SignedOutQueue(options.log);
    this.#replay = new SignedOutQueue(options.log);
  }

  fromClient(message: JSONRPCMessage): void {
    if (this.#state === "open") {
      // The host's answer to a sign-in link it was shown while signed out: nothing for the server.
      if (isResponse(message) && this.#link.answered(message)) return;
      this.#options.relay.fromClient(message);
      return;
    }
    // A probing host's discover never signs in and never waits for the login to be read: the router answers it.
    if (isRequest(message) && message.method === "server/discover" && this.#state !== "signed-out") {
      this.#options.relay.fromClient(message);
      return;
    }
    this.#link.observe(message);
    if (this.#state === "signed-out") {
      this.#handle(message);
      return;
    }
    if (isRequest(message) && isListMethod(message.method)) this.#timeList(message);
    this.#keep(this.#early, message);
    if (this.#state === "unknown") void this.#check();
  }

  /** Keeps a message for the server; past the queue's bound a request is refused, a notification dropped. */
  #keep(queue: SignedOutQueue, message: JSONRPCMessage): boolean {
    const kept = queue.push(message, (earlier) => {
      if (isRequest(earlier)) this.#swallow.delete(requestKey(earlier.id));
    });
    if (kept !== "full") return kept === "queued";
    if (isRequest(message)) {
      this.#held.release(message);
      const { serverUrl, loginCommand } = this.#options;
      this.#options.toClient(queueFullAnswer(message.id, queue.size, serverUrl, loginCommand));
    }
    return false;
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
    this.#link.prompt = prompt;
    if (this.#state === "grace") {
      clearTimeout(this.#graceTimer);
      this.#graceTimer = setTimeout(
        () => this.#endGrace(),
        prompt.browserOpened ? OPENED_BROWSER_GRACE_MS : 0,
      );
      return;
    }
    if (this.#state !== "signed-out") return;
    this.#link.notify(prompt.message);
    this.#link.offerUrl();
    if (!this.#link.mustActOutsideHost()) return;
    for (const held of this.#held.releaseAll((message) => !isListMethod(message.method))) {
      this.#replay.remove(held);
      this.#answerSignedOut(held);
    }
  }

  async close(timeoutMs?: number): Promise<void> {
    this.#held.releaseAll();
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
      this.#held.releaseAll();
      for (const message of this.#early.drain()) this.#options.relay.fromClient(message);
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
    for (const message of this.#early.drain()) this.#handle(message);
  }

  #handle(message: JSONRPCMessage): void {
    if (isResponse(message)) {
      this.#link.answered(message);
      return;
    }
    if (!isRequest(message)) {
      this.#handleNotification(message);
      return;
    }
    const { id, method } = message;
    const params = isObject(message.params) ? message.params : {};
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
      // The sign-in that just failed is the answer; otherwise the list waits for the sign-in, within its host's patience.
      if (this.#failedJustNow) {
        this.#held.release(message);
        this.#answerEmptyList(message);
        return;
      }
      this.#timeList(message);
      if (this.#keep(this.#replay, message)) this.#startSignIn();
      return;
    }
    if (method === "subscriptions/listen") {
      const filter = isObject(params.notifications) ? params.notifications : {};
      if (!this.#keep(this.#replay, message)) return;
      this.#listens.push({ id, filter });
      // Acknowledged at once (a host waits for it): the list changes are the bridge's to announce until signed in.
      this.#acknowledged.add(requestKey(id));
      this.#options.toClient(listenAcknowledgment(id, filter));
      this.#startSignIn();
      return;
    }
    if (method === "logging/setLevel") {
      if (!this.#keep(this.#replay, message)) return;
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
        const held = this.#held.get(requestId);
        if (held) {
          this.#held.release(held);
          this.#replay.remove(held);
          return;
        }
      }
    }
    this.#keep(this.#replay, message);
    if (method === "notifications/initialized") {
      this.#link.ready();
    }
  }

  /**
   * A legacy host's `initialize`: answered by the bridge (the remembered server's face, else its own, with list
   * changes declared); the server gets it once signed in, and its answer goes no further.
   */
  #initialize(message: HostRequest): void {
    const params = isObject(message.params) ? message.params : {};
    const capabilities = isObject(params.capabilities) ? params.capabilities : {};
    this.#link.initialized(capabilities);
    if (!this.#keep(this.#replay, message)) return;
    this.#swallow.add(requestKey(message.id));
    this.#answer(
      message.id,
      signedOutInitializeResult(params.protocolVersion, this.#options.serverUrl, this.#discover),
    );
    this.#startSignIn();
  }

  /** A request that needs the server: it waits for the sign-in within the host's patience, then says what to do. */
  #holdCall(original: HostRequest): void {
    // The sign-in that just failed is the answer; a later call starts a new one.
    if (this.#failedJustNow) {
      this.#answerSignedOut(original);
      return;
    }
    let message = original;
    const params = isObject(message.params) ? message.params : {};
    let retried = false;
    if (message.method === "tools/call" && hasModernEnvelope(params)) {
      const after = this.#link.rounds.after(params);
      if (after) {
        message = { ...message, params: after };
        retried = true;
      } else if (this.#link.prompt && this.#link.rounds.canAsk(params, this.#link.prompt)) {
        this.#answer(message.id, this.#link.rounds.ask(this.#link.prompt));
        return;
      }
    }
    // The person must act and this host shows no dialog for it: waiting would only stall the host's agent.
    if (!retried && this.#link.mustActOutsideHost()) {
      this.#answerSignedOut(message);
      this.#startSignIn();
      return;
    }
    if (!this.#keep(this.#replay, message)) return;
    this.#held.hold(message, this.#options.callWaitMs, () => {
      this.#replay.remove(message);
      this.#answerSignedOut(message);
    });
    this.#startSignIn();
  }

  /** Starts the patience of a held list at its arrival: its host's time-out runs from when it sent it. */
  #timeList(message: HostRequest): void {
    this.#held.hold(message, this.#options.listWaitMs ?? listWaitMs(this.#link.hostInfo), () => {
      if (this.#early.remove(message) || this.#replay.remove(message)) this.#answerEmptyList(message);
    });
  }

  /** A list answered by the bridge before the sign-in ended: empty, and a list change follows the sign-in. */
  #answerEmptyList(message: HostRequest): void {
    const params = isObject(message.params) ? message.params : {};
    this.#answeredEmpty.add(message.method);
    this.#answer(message.id, emptyListResult(message.method, hasModernEnvelope(params)));
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
      this.#held.releaseAll();
      for (const message of this.#early.drain()) this.#options.relay.fromClient(message);
      // A host with little patience may have had a list answered empty meanwhile.
      this.#announceListChanges();
      return;
    }
    this.#options.log.info(`Signed in to ${this.#options.serverUrl}.`);
    this.#state = "open";
    this.#held.releaseAll();
    for (const message of this.#replay.drain()) this.#options.relay.fromClient(message);
    this.#link.completed();
    this.#announceListChanges();
  }

  #announceListChanges(): void {
    const host = { legacy: this.#link.legacyHost, listed: this.#answeredEmpty, listens: this.#listens };
    for (const message of listChangeNotifications(host)) this.#options.toClient(message);
  }

  #failed(error: unknown): void {
    this.#signingIn = undefined;
    if (this.#state === "open") return;
    this.#lastFailure = error instanceof Error ? error : new Error(String(error));
    this.#link.forget();
    this.#options.log.info(`Sign-in to ${this.#options.serverUrl} did not complete: ${describeError(error)}`);
    this.#link.notify(this.#signedOutText(undefined));
    this.#failedJustNow = true;
    this.#endGrace();
    this.#failedJustNow = false;
    for (const held of this.#held.releaseAll()) {
      this.#replay.remove(held);
      if (isListMethod(held.method)) this.#answerEmptyList(held);
      else this.#answerSignedOut(held);
    }
  }

  #signedOutText(tool: string | undefined): string {
    const { serverUrl, loginCommand } = this.#options;
    return signedOutText({
      serverUrl,
      loginCommand,
      lastFailure: this.#lastFailure,
      prompt: this.#link.prompt,
      tool,
    });
  }

  #answerSignedOut(message: HostRequest): void {
    const params = isObject(message.params) ? message.params : {};
    const tool = message.method === "tools/call" && typeof params.name === "string" ? params.name : undefined;
    const text = this.#signedOutText(tool);
    this.#options.toClient(signedOutAnswer(message.id, message.method, text, hasModernEnvelope(params)));
  }

  #answer(id: RequestId, result: Json): void {
    this.#options.toClient({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  }
}
