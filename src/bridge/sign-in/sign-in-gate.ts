/** The host is never held past its patience by a sign-in: signed out, the bridge answers the host's opening itself at once, holds its lists until one deadline per start, then hands over to the relay. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { SignInPrompt } from "../../auth/index.js";
import { type BridgeLog, describeError } from "../log/log.js";
import {
  isJsonObject as isObject,
  isRequest,
  isResponse,
  type JsonObject as Json,
  requestKey,
} from "../messages/jsonrpc.js";
import type { EraRelay } from "../messages/request-model.js";
import { hasModernEnvelope, type ToClient } from "../messages/request-model.js";
import { bridgeDiscoverResult, signedOutInitializeResult } from "../translate/discover.js";
import { APP_LIST_WAIT_MS, hostFacts } from "./host-patience.js";
import { HostSignInLink } from "./sign-in-link.js";
import {
  acknowledgedListen,
  isListMethod,
  listChangeNotifications,
  listenAcknowledgment,
  queueFullAnswer,
  SIGN_IN_TOOL,
  signedOutAnswer,
  signedOutListResult,
  signedOutText,
  signInTool,
} from "./signed-out-messages.js";
import { HeldRequests, SignedOutQueue } from "./signed-out-queue.js";

/** The tools this login listed last, kept beside its login (first-sign-in.ts): a signed-out start lists these. */
export interface LastTools {
  read(): Promise<Json[] | undefined>;
  write(tools: Json[]): void;
}

export interface SignInGateOptions {
  /** The relay every message goes to once signed in (the era router). */
  relay: EraRelay;
  toClient: ToClient;
  log: BridgeLog;
  serverUrl: string;
  /** Whether a usable login is stored now (read at the first message). */
  signedIn(): Promise<boolean>;
  /** The server's remembered 2026-07-28 DiscoverResult, if any: the signed-out `initialize` answers from it. */
  rememberedDiscover(): Promise<Json | undefined>;
  /**
   * Runs one sign-in to its end: resolves once signed in (false: it ended without reaching the server, which is the
   * relay's to report), rejects with why (SignInUrlRefused: the URL's fault).
   */
  signIn(): Promise<boolean>;
  lastTools?: LastTools;
  /** How long a `tools/call` (or another request that needs the server) waits for the sign-in before it is answered. */
  callWaitMs: number;
  /** The terminal command that signs in, named in what the host is told. */
  loginCommand: string;
  /** How long after the host's first message its lists may wait for the sign-in (default: by the host, host-patience). */
  listWaitMs?: number | undefined;
}

type HostRequest = Extract<JSONRPCMessage, { id: RequestId; method: string }>;

/** How long what the host sent after its initialize waits for the server's answer to it, once signed in. */
const INITIALIZE_ANSWER_WAIT_MS = 5_000;
/** How long a first start (no login, no remembered server) of a patient host waits for a sign-in that needs no person. */
export const OPENING_GRACE_MS = 500;
/** The most `tools/list` answers awaited at once for the last-tools store: more are not remembered. */
const MAX_WATCHED_LISTS = 16;

export class SignInGate {
  readonly #options: SignInGateOptions;
  #state: "unknown" | "checking" | "signed-out" | "open" = "unknown";
  /** Arrived while the stored login was read. */
  readonly #early: SignedOutQueue;
  /** What the relay gets once signed in, in the order the host sent it. */
  readonly #replay: SignedOutQueue;
  /** Lists and calls held for the sign-in: lists until the start's deadline, calls each for the call wait. */
  readonly #held = new HeldRequests();
  /** When the lists of this start stop waiting for the sign-in (set by the host's first message). */
  #listDeadline: number | undefined;
  /** The lists the bridge answered itself: a list change follows the sign-in for these only. */
  readonly #answeredByBridge = new Set<string>();
  /** The `sign_in` tool was listed: its calls are the bridge's to answer, signed in or not. */
  #offeredSignIn = false;
  /** `sign_in` calls waiting for the sign-in link (or the sign-in's end). */
  readonly #signInCalls: HostRequest[] = [];
  /** Requests the gate answered itself whose relay answer the host must not see again (its `initialize`). */
  readonly #swallow = new Set<string>();
  #discover: Json | undefined;
  #lastTools: Json[] | undefined;
  readonly #listens: Array<{ id: RequestId; filter: Json }> = [];
  /** Listens the bridge acknowledged itself: the server's own acknowledgment later goes no further. */
  readonly #acknowledged = new Set<string>();
  /** Signed in: the `tools/list` requests whose answers are remembered as this login's last tools. */
  readonly #watchedLists = new Set<string>();
  #rememberedTools = "";
  readonly #link: HostSignInLink;
  #signingIn: Promise<boolean> | undefined;
  /** Signed in: the host's initialize is with the server; what the host sent after it goes once it is answered. */
  #afterInitialize: { id: string; messages: JSONRPCMessage[] } | undefined;
  #lastFailure: Error | undefined;
  /** How a sign-in ended within the opening grace: handled once the host's first messages are (#check). */
  #settledWhileChecking: { ok: true; reached: boolean } | { ok: false; error: unknown } | undefined;
  #endOpeningGrace: (() => void) | undefined;

  constructor(options: SignInGateOptions) {
    this.#options = options;
    this.#link = new HostSignInLink(options.toClient, options.log);
    this.#early = new SignedOutQueue(options.log);
    this.#replay = new SignedOutQueue(options.log);
  }

  fromClient(message: JSONRPCMessage): void {
    if (this.#afterInitialize) {
      this.#afterInitialize.messages.push(message);
      return;
    }
    if (this.#state === "open") {
      // The host's answer to a sign-in link it was shown while signed out: nothing for the server.
      if (isResponse(message) && this.#link.answered(message)) return;
      if (isRequest(message) && this.#answeredWhenOpen(message)) return;
      this.#options.relay.fromClient(message);
      return;
    }
    this.#link.observe(message);
    this.#listDeadline ??= Date.now() + this.#listWaitMs();
    if (this.#state === "signed-out") {
      this.#handle(message);
      return;
    }
    if (isRequest(message) && isListMethod(message.method)) this.#holdList(message);
    this.#keep(this.#early, message);
    if (this.#state === "unknown") void this.#check();
  }

  /** How long this host's lists may wait for the sign-in: the option, else by the host (host-patience). */
  #listWaitMs(): number {
    return this.#options.listWaitMs ?? hostFacts(this.#link.hostInfo).listWaitMs;
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
    if (isResponse(message) && this.#swallow.delete(requestKey(message.id))) {
      if (this.#afterInitialize?.id === requestKey(message.id)) this.#sendAfterInitialize(message);
      return;
    }
    const listen = acknowledgedListen(message);
    if (listen !== undefined && this.#acknowledged.delete(requestKey(listen))) return;
    if (isResponse(message) && this.#watchedLists.delete(requestKey(message.id))) this.#remember(message);
    this.#options.toClient(message, raw, related);
  };

  /** A sign-in shows the person where to go: the host hears of it too (its URL dialog, its log, the sign_in tool). */
  showPrompt(prompt: SignInPrompt): void {
    this.#link.prompt = prompt;
    // Within the opening grace the host has no answer to its opening yet: #check acts on the prompt once it has
    // (the link shows it in the host's log and dialog when the host says it is initialized).
    if (this.#state === "checking") {
      this.#endOpeningGrace?.();
      return;
    }
    if (this.#state === "open") return;
    this.#link.notify(prompt.message);
    this.#link.offerUrl();
    this.#actOnPrompt(prompt);
  }

  /** The sign_in calls get the link; a request that must wait for a person outside the host is answered now. */
  #actOnPrompt(prompt: SignInPrompt): void {
    this.#answerSignInCalls();
    if (!this.#link.mustActOutsideHost()) return;
    for (const held of this.#held.releaseAll((message) => !isListMethod(message.method))) {
      this.#replay.remove(held);
      // A modern host that opens URLs itself gets the link in its call's sign-in round.
      const params = isObject(held.params) ? held.params : {};
      if (
        held.method === "tools/call" &&
        hasModernEnvelope(params) &&
        this.#link.rounds.canAsk(params, prompt)
      )
        this.#answer(held.id, this.#link.rounds.ask(prompt));
      else this.#answerSignedOut(held);
    }
  }

  async close(timeoutMs?: number): Promise<void> {
    this.#held.releaseAll();
    await this.#options.relay.close(timeoutMs);
  }

  async #check(): Promise<void> {
    this.#state = "checking";
    const [signedIn, discover, lastTools] = await Promise.all([
      // A store that cannot be read is the relay's to report: pass through.
      this.#options.signedIn().catch(() => true),
      this.#options.rememberedDiscover().catch(() => undefined),
      this.#options.lastTools?.read().catch(() => undefined),
    ]);
    this.#discover = discover;
    this.#lastTools = lastTools;
    // Only a host that waits longer than an app for its lists can spare the grace (apps start their turn in 1-2 s).
    const patient = this.#listWaitMs() > APP_LIST_WAIT_MS;
    const settled = signedIn || discover !== undefined || !patient ? undefined : await this.#settlesAtOnce();
    // A sign-in that ended without a login (a server that cannot be reached) is the relay's to report, later.
    if (signedIn || (settled?.ok && settled.reached)) {
      this.#signingIn = undefined;
      this.#state = "open";
      this.#held.releaseAll();
      for (const message of this.#early.drain()) this.fromClient(message);
      return;
    }
    this.#state = "signed-out";
    this.#options.log.debug("not signed in: the bridge answers the client itself until the sign-in ends");
    for (const message of this.#early.drain()) this.#handle(message);
    if (settled?.ok) this.#open();
    else if (settled) this.#failed(settled.error);
    else if (this.#link.prompt) this.#actOnPrompt(this.#link.prompt);
  }

  /**
   * A first start against a server whose face is unknown: a sign-in that ends at once (a server that lets the
   * bridge in, a login another bridge just stored) gives the host the server's own opening, capabilities and
   * extensions included. The wait ends as soon as a person is needed, and at OPENING_GRACE_MS in any case; how the
   * sign-in ended by then is handled once the host's first messages are (#check).
   */
  async #settlesAtOnce(): Promise<
    { ok: true; reached: boolean } | { ok: false; error: unknown } | undefined
  > {
    this.#startSignIn();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#signingIn?.catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, OPENING_GRACE_MS);
        this.#endOpeningGrace = resolve;
      }),
    ]);
    clearTimeout(timer);
    this.#endOpeningGrace = undefined;
    const settled = this.#settledWhileChecking;
    this.#settledWhileChecking = undefined;
    return settled;
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
    // Signed out, a discover needs nothing of the server: the remembered one, else the bridge's own face.
    if (method === "server/discover") {
      this.#answer(id, bridgeDiscoverResult(this.#discover));
      return;
    }
    if (method === "ping") {
      this.#answer(id, {});
      return;
    }
    if (isListMethod(method)) {
      if (this.#keep(this.#replay, message)) this.#holdList(message);
      // After a failed sign-in, a call (of sign_in or a listed tool) starts the next one, not a list.
      if (!this.#lastFailure) this.#startSignIn();
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
    if (this.#isSignInCall(message)) {
      this.#signInCall(message);
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
    if (method === "notifications/initialized") this.#link.ready();
  }

  /**
   * A legacy host's `initialize`: answered by the bridge at once (the remembered server's face, else its own, with
   * list changes declared); the server gets it once signed in, and its answer goes no further.
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
    // The person must act and this host shows no dialog for it (or the sign-in just failed): waiting would only
    // stall the host's agent. A call after a failure starts a new sign-in.
    if (!retried && (this.#link.mustActOutsideHost() || (this.#lastFailure && !this.#signingIn))) {
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

  /** A list waits for the sign-in until the start's deadline (one for all its lists), then the bridge answers it. */
  #holdList(message: HostRequest): void {
    const left = (this.#listDeadline ?? 0) - Date.now();
    const answer = () => {
      if (this.#early.remove(message) || this.#replay.remove(message)) this.#answerList(message);
    };
    if (left <= 0 || (this.#lastFailure && !this.#signingIn)) answer();
    else this.#held.hold(message, left, answer);
  }

  /**
   * A list answered by the bridge before the sign-in ended, and a list change follows the sign-in: the tools this
   * login listed last, else the `sign_in` tool (never none: some hosts keep an empty list across starts).
   */
  #answerList(message: HostRequest): void {
    this.#held.release(message);
    const params = isObject(message.params) ? message.params : {};
    let items: Json[] = [];
    if (message.method === "tools/list") {
      items = this.#lastTools ?? [signInTool(this.#signInText())];
      if (!this.#lastTools) this.#offeredSignIn = true;
    }
    this.#answeredByBridge.add(message.method);
    this.#answer(message.id, signedOutListResult(message.method, hasModernEnvelope(params), items));
  }

  #isSignInCall(message: HostRequest): boolean {
    const params = isObject(message.params) ? message.params : {};
    return this.#offeredSignIn && message.method === "tools/call" && params.name === SIGN_IN_TOOL;
  }

  /** A call of `sign_in`: answered with where to sign in once that is known (at once when it is). */
  #signInCall(message: HostRequest): void {
    this.#startSignIn();
    this.#signInCalls.push(message);
    this.#held.hold(message, this.#options.callWaitMs, () => this.#answerSignInCalls(true));
    this.#answerSignInCalls();
  }

  #answerSignInCalls(evenWithoutLink = false): void {
    if (!evenWithoutLink && !this.#link.prompt && !this.#lastFailure && this.#state !== "open") return;
    for (const call of this.#signInCalls.splice(0)) {
      this.#held.release(call);
      this.#answerTool(call, this.#state === "open" ? this.#signedInText() : this.#signInText(), false);
    }
  }

  /** Signed in: the `sign_in` tool still listed by a host that did not reload says so; a list's answer is remembered. */
  #answeredWhenOpen(message: HostRequest): boolean {
    if (this.#isSignInCall(message)) {
      this.#answerTool(message, this.#signedInText(), false);
      return true;
    }
    const params = isObject(message.params) ? message.params : {};
    if (message.method === "tools/list" && this.#options.lastTools && params.cursor === undefined)
      if (this.#watchedLists.size < MAX_WATCHED_LISTS) this.#watchedLists.add(requestKey(message.id));
    return false;
  }

  /** The server's whole tools list, remembered for this login's next signed-out start (when it changed). */
  #remember(message: JSONRPCMessage): void {
    const result = (message as { result?: unknown }).result;
    if (!isObject(result) || !Array.isArray(result.tools) || result.nextCursor !== undefined) return;
    const tools = result.tools.filter(isObject);
    const text = JSON.stringify(tools);
    if (text === this.#rememberedTools) return;
    this.#rememberedTools = text;
    this.#options.lastTools?.write(tools);
  }

  #startSignIn(): void {
    if (this.#signingIn) return;
    const running = this.#options.signIn();
    this.#signingIn = running;
    // Within the opening grace the host's messages are not handled yet: #check handles the end after them.
    running.then(
      (reached) => {
        if (this.#state === "checking") this.#settledWhileChecking = { ok: true, reached };
        else this.#open();
      },
      (error: unknown) => {
        if (this.#state === "checking") this.#settledWhileChecking = { ok: false, error };
        else this.#failed(error);
      },
    );
  }

  /** Signed in: the relay takes over, gets what the host sent meanwhile, and the host hears its lists changed. */
  #open(): void {
    this.#signingIn = undefined;
    if (this.#state === "open") return;
    const answered = this.#answeredByBridge.size > 0;
    const { reload } = hostFacts(this.#link.hostInfo);
    this.#options.log.info(`Signed in to ${this.#options.serverUrl}${answered ? `; ${reload}` : "."}`);
    this.#state = "open";
    this.#lastFailure = undefined;
    this.#held.releaseAll();
    this.#answerSignInCalls();
    const [first, ...rest] = this.#replay.drain();
    // A session opens with its initialize answered before anything else is sent (as the host itself waited).
    if (first && isRequest(first) && first.method === "initialize") {
      this.#afterInitialize = { id: requestKey(first.id), messages: rest };
      // Bounded: a relay that cannot reach the server may never answer it; the rest then goes anyway.
      setTimeout(() => this.#sendAfterInitialize(), INITIALIZE_ANSWER_WAIT_MS).unref();
      this.#options.relay.fromClient(first);
    } else for (const message of first ? [first, ...rest] : []) this.fromClient(message);
    this.#link.completed();
    this.#announce(this.#answeredByBridge);
  }

  /** The server answered the host's initialize: what the host sent since goes on, or gets the same error. */
  #sendAfterInitialize(answer?: JSONRPCMessage): void {
    const after = this.#afterInitialize;
    this.#afterInitialize = undefined;
    const error = answer && "error" in answer ? answer.error : undefined;
    for (const message of after?.messages ?? []) {
      if (!error) this.fromClient(message);
      else if (isRequest(message))
        this.#options.toClient({ jsonrpc: "2.0", id: message.id, error } as JSONRPCMessage);
    }
  }

  /** The list changes of `lists` (the ones the bridge answered itself), as this host hears them. */
  #announce(lists: Iterable<string>): void {
    const host = { legacy: this.#link.legacyHost, listed: lists, listens: this.#listens };
    for (const message of listChangeNotifications(host)) this.#options.toClient(message);
  }

  #failed(error: unknown): void {
    this.#signingIn = undefined;
    if (this.#state === "open") return;
    this.#lastFailure = error instanceof Error ? error : new Error(String(error));
    this.#link.forget();
    this.#options.log.info(`Sign-in to ${this.#options.serverUrl} did not complete: ${describeError(error)}`);
    this.#link.notify(this.#signedOutText(undefined));
    this.#answerSignInCalls();
    for (const held of this.#held.releaseAll()) {
      this.#replay.remove(held);
      if (isListMethod(held.method)) this.#answerList(held);
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

  /** The sign_in tool's words: why there are no tools yet, where to sign in, and how this host then loads them. */
  #signInText(): string {
    const { reload } = hostFacts(this.#link.hostInfo);
    const where =
      this.#link.prompt || this.#lastFailure
        ? this.#signedOutText(SIGN_IN_TOOL)
        : `Call ${SIGN_IN_TOOL} to get the sign-in link (or run \`${this.#options.loginCommand}\` in a terminal).`;
    return `chat-mcp-bridge is not signed in to ${this.#options.serverUrl}, so chat's tools are not listed yet. ${where} Once signed in, ${reload}`;
  }

  #signedInText(): string {
    return `Signed in to ${this.#options.serverUrl}: ${hostFacts(this.#link.hostInfo).reload}`;
  }

  #answerSignedOut(message: HostRequest): void {
    const params = isObject(message.params) ? message.params : {};
    const tool = message.method === "tools/call" && typeof params.name === "string" ? params.name : undefined;
    const text = this.#signedOutText(tool);
    this.#options.toClient(signedOutAnswer(message.id, message.method, text, hasModernEnvelope(params)));
  }

  /** A `sign_in` call's answer: a tool result the host shows its model and person. */
  #answerTool(message: HostRequest, text: string, isError: boolean): void {
    const params = isObject(message.params) ? message.params : {};
    const result: Json = { content: [{ type: "text", text }], isError };
    this.#answer(message.id, hasModernEnvelope(params) ? { ...result, resultType: "complete" } : result);
  }

  #answer(id: RequestId, result: Json): void {
    this.#options.toClient({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  }
}
