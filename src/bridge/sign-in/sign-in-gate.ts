/** Signed out, the bridge answers the host itself (its opening at once, its lists once waiting cannot bring the tools, its calls when the sign-in ends or says where to go); signed in, the relay takes everything. */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { SignInPrompt } from "../../auth/index.js";
import { type BridgeLog, describeError } from "../log/log.js";
import {
  BridgeRequestIds,
  isJsonObject as isObject,
  isRequest,
  isResponse,
  type JsonObject as Json,
  requestKey,
} from "../messages/jsonrpc.js";
import {
  clientFromEnvelope,
  type EraRelay,
  hasModernEnvelope,
  type ToClient,
} from "../messages/request-model.js";
import { asModernResult, bridgeDiscoverResult, signedOutInitializeResult } from "../translate/discover.js";
import { LISTEN_ACKNOWLEDGED, META_SUBSCRIPTION_ID } from "../translate/listen.js";
import { SignInUrlRefused } from "../upstream/http/endpoint-check.js";

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
  /** Runs one sign-in to its end: true once signed in, false when it never reached the server; rejects with why. */
  signIn(): Promise<boolean>;
  lastTools?: LastTools;
  /** How long a request waits for the sign-in: a call from its arrival, a waiting host's lists from its first message. */
  waitMs: number;
  /** The terminal command that signs in, named in what the host is told. */
  loginCommand: string;
}

type HostRequest = Extract<JSONRPCMessage, { id: RequestId; method: string }>;
type Ended = { reached: boolean } | { error: unknown };

/** How long what the host sent after its initialize waits for the server's answer to it, once signed in. */
const INITIALIZE_ANSWER_WAIT_MS = 5_000;
/** How long a first start (no login, no remembered server) of a host that waits waits for a sign-in that needs no person. */
export const OPENING_GRACE_MS = 500;
/** The most `tools/list` answers awaited at once for the last-tools store: more are not remembered. */
const MAX_WATCHED_LISTS = 16;

export class SignInGate {
  readonly #options: SignInGateOptions;
  #state: "unknown" | "checking" | "signed-out" | "open" = "unknown";
  /** What the relay gets once signed in, in the order the host sent it. */
  readonly #queue: SignedOutQueue;
  /** Requests waiting for the sign-in, each with the timer that has the bridge answer it. */
  readonly #held = new Map<string, { message: HostRequest; timer: NodeJS.Timeout }>();
  /** When this start's lists stop waiting (set by the host's first message). */
  #listDeadline = 0;
  /** The lists the bridge answered itself: a list change follows the sign-in for these only. */
  readonly #answeredLists = new Set<string>();
  /** The `sign_in` tool was listed: its calls are the bridge's to answer, signed in or not. */
  #offeredSignIn = false;
  /** Requests the gate answered itself whose relay answer the host must not see again (its `initialize`). */
  readonly #swallow = new Set<string>();
  readonly #listens: Array<{ id: RequestId; filter: Json }> = [];
  /** Listens the bridge acknowledged itself: the server's own acknowledgment later goes no further. */
  readonly #acknowledged = new Set<string>();
  /** Signed in: the `tools/list` requests whose answers are remembered as this login's last tools. */
  readonly #watchedLists = new Set<string>();
  #rememberedTools = "";
  readonly #host: SignedOutHost;
  #discover: Json | undefined;
  #lastTools: Json[] | undefined;
  #signingIn: Promise<boolean> | undefined;
  /** How a sign-in ended within the opening grace: acted on once the host's first messages are handled. */
  #endedEarly: Ended | undefined;
  #endGrace: (() => void) | undefined;
  /** Signed in: the host's initialize is with the server; what the host sent after it goes once it is answered. */
  #afterInitialize: { id: string; messages: JSONRPCMessage[] } | undefined;
  #lastFailure: Error | undefined;

  constructor(options: SignInGateOptions) {
    this.#options = options;
    this.#host = new SignedOutHost(options.toClient, options.log);
    this.#queue = new SignedOutQueue(options.log);
  }

  fromClient(message: JSONRPCMessage): void {
    if (this.#afterInitialize) {
      this.#afterInitialize.messages.push(message);
      return;
    }
    if (this.#state === "open") {
      // The host's answer to a sign-in link it was shown while signed out: nothing for the server.
      if (isResponse(message) && this.#host.answered(message)) return;
      if (isRequest(message) && this.#answeredWhenOpen(message)) return;
      this.#options.relay.fromClient(message);
      return;
    }
    this.#host.observe(message);
    if (!this.#listDeadline) this.#listDeadline = Date.now() + this.#options.waitMs;
    if (this.#state === "signed-out") {
      this.#handle(message);
      return;
    }
    this.#keep(message);
    if (this.#state === "unknown") void this.#check();
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
    this.#host.prompt = prompt;
    // Within the opening grace the host has no answer to its opening yet: #check acts on the prompt once it has.
    if (this.#state === "checking") this.#endGrace?.();
    if (this.#state !== "signed-out") return;
    this.#host.show();
    this.#actOnPrompt();
  }

  async close(timeoutMs?: number): Promise<void> {
    for (const { timer } of this.#held.values()) clearTimeout(timer);
    this.#held.clear();
    await this.#options.relay.close(timeoutMs);
  }

  /** Keeps a message for the server; past the queue's bound a request is refused, a notification dropped. */
  #keep(message: JSONRPCMessage): boolean {
    const kept = this.#queue.push(message, (earlier) => {
      if (isRequest(earlier)) this.#swallow.delete(requestKey(earlier.id));
    });
    if (kept !== "full") return kept === "queued";
    if (isRequest(message)) {
      this.#release(message);
      const text =
        `chat-mcp-bridge: ${this.#queue.size} requests are already waiting for the sign-in to ${this.#options.serverUrl}; ` +
        `this one was not kept. Finish signing in (or run \`${this.#options.loginCommand}\` in a terminal), then send it again.`;
      this.#options.toClient({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: text } });
    }
    return false;
  }

  /**
   * Reads the stored login. A first start of a host that waits gives a sign-in that ends at once (a server that lets
   * the bridge in, a login another bridge just stored) OPENING_GRACE_MS: the host then gets the server's own opening.
   */
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
    if (!signedIn && discover === undefined && this.#host.waits) {
      this.#startSignIn();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, OPENING_GRACE_MS);
        this.#endGrace = () => {
          clearTimeout(timer);
          resolve();
        };
        this.#signingIn?.then(this.#endGrace, this.#endGrace);
      });
      this.#endGrace = undefined;
    }
    let ended = this.#endedEarly;
    this.#endedEarly = undefined;
    // A grace sign-in that did not reach the server may only have been kept from signing in (the host had sent
    // nothing but `server/discover`): it proves nothing, and what the host sends next starts another.
    if (ended && "reached" in ended && !ended.reached) {
      ended = undefined;
      this.#signingIn = undefined;
    }
    const messages = this.#queue.drain();
    // Signed in, or the grace sign-in reached the server (what is left of `ended` is that or a failure).
    if (signedIn || (ended && "reached" in ended)) {
      this.#signingIn = undefined;
      this.#state = "open";
      for (const message of messages) this.fromClient(message);
      return;
    }
    this.#state = "signed-out";
    this.#options.log.debug("not signed in: the bridge answers the client itself until the sign-in ends");
    for (const message of messages) this.#handle(message);
    if (ended) this.#ended(ended);
    else if (this.#host.prompt) this.#actOnPrompt();
  }

  #handle(message: JSONRPCMessage): void {
    if (isResponse(message)) {
      this.#host.answered(message);
      return;
    }
    if (!isRequest(message)) {
      this.#handleNotification(message);
      return;
    }
    const { id, method } = message;
    const params = isObject(message.params) ? message.params : {};
    if (method === "initialize") {
      // Answered at once (the remembered server's face, else the bridge's own, list changes declared); the server
      // gets it once signed in, and its answer goes no further.
      if (!this.#keep(message)) return;
      this.#swallow.add(requestKey(id));
      this.#answer(
        id,
        signedOutInitializeResult(params.protocolVersion, this.#options.serverUrl, this.#discover),
      );
      this.#startSignIn();
    } else if (method === "server/discover") {
      // Signed out, a discover needs nothing of the server: the remembered one, else the bridge's own face.
      this.#answer(id, bridgeDiscoverResult(this.#discover));
    } else if (method === "ping") {
      this.#answer(id, {});
    } else if (isListMethod(method)) {
      if (this.#keep(message)) this.#holdList(message);
      // After a failed sign-in, a call (of sign_in or a listed tool) starts the next one, not a list.
      if (!this.#lastFailure) this.#startSignIn();
    } else if (method === "subscriptions/listen") {
      if (!this.#keep(message)) return;
      const filter = isObject(params.notifications) ? params.notifications : {};
      this.#listens.push({ id, filter });
      // Acknowledged at once (a host waits for it): the list changes are the bridge's to announce until signed in.
      this.#acknowledged.add(requestKey(id));
      this.#options.toClient(listenAcknowledgment(id, filter));
      this.#startSignIn();
    } else if (method === "logging/setLevel") {
      if (!this.#keep(message)) return;
      this.#swallow.add(requestKey(id));
      this.#answer(id, {});
    } else if (this.#isSignInCall(message)) {
      // Answered with where to sign in once that is known (at once when it is).
      this.#startSignIn();
      this.#hold(message, this.#options.waitMs);
      if (this.#host.prompt || this.#lastFailure) this.#answerNow(message);
    } else this.#holdCall(message);
  }

  #handleNotification(message: JSONRPCMessage): void {
    const { method, params } = message as { method: string; params?: unknown };
    const cancelled = method === "notifications/cancelled" && isObject(params) ? params.requestId : undefined;
    const held =
      typeof cancelled === "string" || typeof cancelled === "number"
        ? this.#held.get(requestKey(cancelled))
        : undefined;
    if (held) {
      this.#release(held.message);
      this.#queue.remove(held.message);
      return;
    }
    this.#keep(message);
    if (method === "notifications/initialized") this.#host.ready();
  }

  /** A request that needs the server: it waits for the sign-in within the host's patience, then says what to do. */
  #holdCall(original: HostRequest): void {
    let message = original;
    const params = isObject(message.params) ? message.params : {};
    const after =
      message.method === "tools/call" && hasModernEnvelope(params)
        ? this.#host.afterRound(params)
        : undefined;
    if (after) message = { ...message, params: after };
    else if (this.#host.mustActOutsideHost() || (this.#lastFailure && !this.#signingIn)) {
      // The person must act and this host shows no dialog for it (or the sign-in just failed): waiting would only
      // stall the host's agent. A call after a failure starts a new sign-in.
      this.#answerNow(message);
      this.#startSignIn();
      return;
    }
    if (!this.#keep(message)) return;
    this.#hold(message, this.#options.waitMs);
    this.#startSignIn();
  }

  /** A list waits only where waiting can bring the tools: a host that waits, until the start's deadline, not after a failure. */
  #holdList(message: HostRequest): void {
    const left = this.#host.waits ? this.#listDeadline - Date.now() : 0;
    if (left <= 0 || (this.#lastFailure && !this.#signingIn)) this.#answerNow(message);
    else this.#hold(message, left);
  }

  /** The sign_in calls get the link; a call that must wait for a person outside the host is answered now. */
  #actOnPrompt(): void {
    const outside = this.#host.mustActOutsideHost();
    for (const { message } of [...this.#held.values()])
      if (this.#isSignInCall(message) || (outside && !isListMethod(message.method))) this.#answerNow(message);
  }

  #hold(message: HostRequest, ms: number): void {
    const key = requestKey(message.id);
    if (!this.#held.has(key))
      this.#held.set(key, { message, timer: setTimeout(() => this.#answerNow(message), ms) });
  }

  #release(message: HostRequest): void {
    const entry = this.#held.get(requestKey(message.id));
    if (entry?.message !== message) return;
    clearTimeout(entry.timer);
    this.#held.delete(requestKey(message.id));
  }

  /**
   * The bridge answers a request itself, now. A list: the tools this login listed last, else the `sign_in` tool (never
   * none: some hosts keep an empty list across starts). A `sign_in` call: where to sign in (or that it is done).
   * Another call: the link in a modern host's sign-in round, else an error that says where to sign in.
   */
  #answerNow(message: HostRequest): void {
    this.#release(message);
    this.#queue.remove(message);
    const { id, method } = message;
    const params = isObject(message.params) ? message.params : {};
    const modern = hasModernEnvelope(params);
    let result: Json | undefined;
    if (isListMethod(method)) {
      if (method === "tools/list" && !this.#lastTools) this.#offeredSignIn = true;
      this.#answeredLists.add(method);
      const items = method !== "tools/list" ? [] : (this.#lastTools ?? [signInTool(this.#signInText())]);
      result = { [LISTS[method]!]: items };
      if (modern) result = asModernResult(method, result);
    } else if (this.#isSignInCall(message)) {
      const signedIn = `Signed in to ${this.#options.serverUrl}: ${this.#host.reload}`;
      result = toolResult(this.#state === "open" ? signedIn : this.#signInText(), false, modern);
    } else if (method === "tools/call")
      result =
        (modern ? this.#host.signInRound(params) : undefined) ??
        toolResult(
          this.#signedOutText(typeof params.name === "string" ? params.name : undefined),
          true,
          modern,
        );
    if (result) this.#answer(id, result);
    else {
      const text = `chat-mcp-bridge: ${this.#signedOutText(undefined)}`;
      this.#options.toClient({ jsonrpc: "2.0", id, error: { code: -32001, message: text } });
    }
  }

  #isSignInCall(message: HostRequest): boolean {
    const params = isObject(message.params) ? message.params : {};
    return this.#offeredSignIn && message.method === "tools/call" && params.name === SIGN_IN_TOOL;
  }

  /** Signed in: the `sign_in` tool still listed by a host that did not reload says so; a list's answer is remembered. */
  #answeredWhenOpen(message: HostRequest): boolean {
    if (this.#isSignInCall(message)) {
      this.#answerNow(message);
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
    running.then(
      (reached) => this.#ended({ reached }),
      (error: unknown) => this.#ended({ error }),
    );
  }

  /** The sign-in ended: within the opening grace #check handles it after the host's first messages. */
  #ended(ended: Ended): void {
    if (this.#state === "checking") {
      this.#endedEarly = ended;
      return;
    }
    this.#signingIn = undefined;
    if ("error" in ended) this.#failed(ended.error);
    else this.#open(ended.reached);
  }

  /** Signed in (or the server is unreachable, the relay's to report): the relay gets what was held, the host its list changes. */
  #open(reached: boolean): void {
    if (this.#state === "open") return;
    const reload = this.#answeredLists.size > 0 ? `; ${this.#host.reload}` : ".";
    if (reached) this.#options.log.info(`Signed in to ${this.#options.serverUrl}${reload}`);
    this.#state = "open";
    this.#lastFailure = undefined;
    for (const { message } of [...this.#held.values()]) {
      this.#release(message);
      if (this.#isSignInCall(message)) this.#answerNow(message);
    }
    const [first, ...rest] = this.#queue.drain();
    // A session opens with its initialize answered before anything else is sent (as the host itself waited).
    if (first && isRequest(first) && first.method === "initialize") {
      this.#afterInitialize = { id: requestKey(first.id), messages: rest };
      // Bounded: a relay that cannot reach the server may never answer it; the rest then goes anyway.
      setTimeout(() => this.#sendAfterInitialize(), INITIALIZE_ANSWER_WAIT_MS).unref();
      this.#options.relay.fromClient(first);
    } else for (const message of first ? [first, ...rest] : []) this.fromClient(message);
    this.#host.completed();
    for (const message of this.#host.listChanges(this.#answeredLists, this.#listens))
      this.#options.toClient(message);
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

  #failed(error: unknown): void {
    if (this.#state === "open") return;
    this.#lastFailure = error instanceof Error ? error : new Error(String(error));
    this.#host.forget();
    this.#options.log.info(`Sign-in to ${this.#options.serverUrl} did not complete: ${describeError(error)}`);
    this.#host.notify(this.#signedOutText(undefined));
    for (const { message } of [...this.#held.values()]) this.#answerNow(message);
  }

  /** What the host is told of a sign-in that has not ended: the link and what to do, or why it failed. */
  #signedOutText(tool: string | undefined): string {
    const { serverUrl, loginCommand } = this.#options;
    const again = tool ? `call ${tool} again` : "try again";
    const failure = this.#lastFailure && `Not signed in to ${serverUrl}: ${describeError(this.#lastFailure)}`;
    // The URL is not the MCP endpoint: signing in again there cannot help.
    if (this.#lastFailure instanceof SignInUrlRefused)
      return `${failure} Change the URL in this MCP server's configuration (the bridge's last argument), then restart it.`;
    if (failure)
      return `${failure} To sign in, ${again} (a new sign-in starts), or run \`${loginCommand}\` in a terminal.`;
    // A host that cannot wait (one process per request) still has the terminal: the login command is named.
    const orLogin = `If this MCP host cannot wait for the sign-in, run \`${loginCommand}\` in a terminal.`;
    const prompt = this.#host.prompt;
    if (prompt)
      return `${prompt.message} When you have signed in, ${again}.${prompt.message.includes(loginCommand) ? "" : ` ${orLogin}`}`;
    return `Signing in to ${serverUrl}: the sign-in page is being prepared. Finish signing in, then ${again}. ${orLogin}`;
  }

  /** The sign_in tool's words: why there are no tools yet, where to sign in, and how this host then loads them. */
  #signInText(): string {
    const where =
      this.#host.prompt || this.#lastFailure
        ? this.#signedOutText(SIGN_IN_TOOL)
        : `Call ${SIGN_IN_TOOL} to get the sign-in link (or run \`${this.#options.loginCommand}\` in a terminal).`;
    return `chat-mcp-bridge is not signed in to ${this.#options.serverUrl}, so chat's tools are not listed yet. ${where} Once signed in, ${this.#host.reload}`;
  }

  #answer(id: RequestId, result: Json): void {
    this.#options.toClient({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  }
}

const RESTART = "restart this app (quit it and start it again) to load chat's tools.";
const BY_ITSELF = "chat's tools appear here by themselves.";
/**
 * Hosts that go on without waiting for a server's lists (an app people run starts its first turn at once; a client
 * that lists on every run loses nothing), by `clientInfo.name`, with how each takes in tools that arrive later.
 */
const GO_ON: Array<[RegExp, string]> = [
  [
    /^claude-code/,
    "type /mcp in Claude Code, choose this server and Reconnect (or start Claude Code again) to load chat's tools.",
  ],
  [/^claude-ai|^claude desktop|codex|cursor|copilot|opencode|^zed|windsurf/, RESTART],
  [/gemini-cli/, "type /mcp refresh in Gemini CLI to load chat's tools."],
  [/qwen/, "type /mcp refresh in Qwen Code to load chat's tools."],
  [/visual studio code|vscode|^stdio: /, BY_ITSELF],
];
/** Any other host is taken for an agent library on an MCP SDK: it lists once and waits for the answer. */
const LIBRARY_RELOAD = "chat's tools appear here by themselves (restart this MCP host if they do not).";

/** The key of each list request's answer; its kind (`tools`, ...) names its list change and its listen filter. */
const LISTS: Record<string, string> = {
  "tools/list": "tools",
  "prompts/list": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates",
};
const kindOf = (method: string): string => method.split("/")[0]!;
const changedOf = (method: string): string => `notifications/${kindOf(method)}/list_changed`;
const filterOf = (method: string): string => `${kindOf(method)}ListChanged`;
export const isListMethod = (method: string): boolean => method in LISTS;

/** The key of the bridge's own input request (the sign-in link) in a modern call's `input_required` round. */
export const SIGN_IN_INPUT = "chat-mcp-bridge/sign-in";
/** The one tool of a host signed out with no tools remembered: it says where and how to sign in, and signs in. */
export const SIGN_IN_TOOL = "sign_in";

/** The `sign_in` tool, its description the words a person needs (`text`): the link or code, and how this host reloads. */
export const signInTool = (text: string): Json => ({
  name: SIGN_IN_TOOL,
  title: "Sign in to chat",
  description: text,
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true, openWorldHint: false },
});

/** A tool result the host shows its model and person (a `resultType` for a modern host). */
export function toolResult(text: string, isError: boolean, modern: boolean): Json {
  const result: Json = { content: [{ type: "text", text }], isError };
  return modern ? { ...result, resultType: "complete" } : result;
}

/** A modern host's listen, acknowledged by the bridge: the list changes it asked for, which the bridge announces. */
export function listenAcknowledgment(id: RequestId, filter: Json): JSONRPCMessage {
  const honoured: Json = {};
  for (const method of Object.keys(LISTS))
    if (filter[filterOf(method)] === true) honoured[filterOf(method)] = true;
  return {
    jsonrpc: "2.0",
    method: LISTEN_ACKNOWLEDGED,
    params: { notifications: honoured, _meta: { [META_SUBSCRIPTION_ID]: id } },
  } as JSONRPCMessage;
}

/** The listen a server acknowledgment names, when it is one. */
export function acknowledgedListen(message: JSONRPCMessage): RequestId | undefined {
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== LISTEN_ACKNOWLEDGED) return undefined;
  const meta = isObject(params) && isObject(params._meta) ? params._meta : {};
  const id = meta[META_SUBSCRIPTION_ID];
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** The host as a signed-out bridge meets it: what it told of itself, and where it is shown the sign-in link. */
export class SignedOutHost {
  /** Where the person is asked to go now, if a sign-in has shown it. */
  prompt: SignInPrompt | undefined;
  /** A legacy host (it sent `initialize`); else a 2026-07-28 one, or not known yet. */
  legacy = false;
  #name = "";
  #opensUrls = false;
  #initialized = false;
  /** The host asked for log messages (`logging/setLevel`): only then is `notifications/message` sent to it. */
  #takesLogs = false;
  #elicitedPrompt: SignInPrompt | undefined;
  /** URL dialogs open in the host, by request id: their elicitation ids. */
  readonly #elicitations = new Map<string, string>();
  readonly #elicitationIds = new BridgeRequestIds("sign-in");
  /** The `requestState` of each sign-in round, each used once. */
  readonly #rounds = new Set<string>();

  constructor(
    private readonly toClient: ToClient,
    private readonly log: BridgeLog,
  ) {}

  /** Whether this host waits for its lists (an agent library), or goes on without them (an app: answered at once). */
  get waits(): boolean {
    return !GO_ON.some(([name]) => name.test(this.#name));
  }

  /** What the person does in this host to see the tools a later sign-in brings: a clause after "once signed in, ". */
  get reload(): string {
    return GO_ON.find(([name]) => name.test(this.#name))?.[1] ?? LIBRARY_RELOAD;
  }

  /** What the host tells of itself: its name, whether it opens URLs, whether it takes log messages. */
  observe(message: JSONRPCMessage): void {
    if (!isRequest(message)) return;
    const params = isObject(message.params) ? message.params : {};
    const info = message.method === "initialize" ? params.clientInfo : undefined;
    if (isObject(info) || (hasModernEnvelope(params) && !this.#name)) {
      const name = (isObject(info) ? info : (clientFromEnvelope(params).clientInfo as Json)).name;
      this.#name = typeof name === "string" ? name.toLowerCase() : "";
    }
    if (message.method === "initialize") {
      const capabilities = isObject(params.capabilities) ? params.capabilities : {};
      this.legacy = true;
      this.#opensUrls = isObject(capabilities.elicitation) && isObject(capabilities.elicitation.url);
    }
    if (message.method !== "logging/setLevel" || this.#takesLogs) return;
    this.#takesLogs = true;
    // Asked for after the link was shown: it hears of it now.
    if (this.prompt) this.notify(this.prompt.message);
  }

  /** The host's `notifications/initialized`: from now on it may be asked and told. */
  ready(): void {
    this.#initialized = true;
    this.show();
  }

  /** The prompt, in the host's log and its URL dialog, where it takes them. */
  show(): void {
    if (this.prompt) this.notify(this.prompt.message);
    this.#offerUrl();
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
    if (!this.#elicitations.delete(key)) return false;
    const result = (message as Json).result;
    this.log.debug(
      `the client answered the sign-in link with ${String(isObject(result) ? result.action : "error")}`,
    );
    return true;
  }

  /** Signed in: every URL dialog still open is told it is done. */
  completed(): void {
    for (const elicitationId of this.#elicitations.values())
      this.toClient({
        jsonrpc: "2.0",
        method: "notifications/elicitation/complete",
        params: { elicitationId },
      } as JSONRPCMessage);
  }

  /** The host's log, only for a legacy host that asked for logs: some fail on a notification they did not ask for (the Vercel AI SDK). */
  notify(text: string): void {
    if (!this.legacy || !this.#initialized || !this.#takesLogs) return;
    this.toClient({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "warning", logger: "chat-mcp-bridge", data: text },
    } as JSONRPCMessage);
  }

  /** URL-mode elicitation (the host's "open this link" dialog), only for a URL no browser was opened on: a one-time page. */
  #offerUrl(): void {
    const prompt = this.prompt;
    if (!prompt || prompt.browserOpened || !this.#opensUrls || !this.#initialized) return;
    if (this.#elicitedPrompt === prompt) return;
    this.#elicitedPrompt = prompt;
    const id = this.#elicitationIds.next();
    const elicitationId = randomUUID();
    this.#elicitations.set(requestKey(id), elicitationId);
    this.toClient({
      jsonrpc: "2.0",
      id,
      method: "elicitation/create",
      params: { mode: "url", message: prompt.message, url: prompt.url, elicitationId },
    } as JSONRPCMessage);
  }

  /** A modern call's `input_required` round whose one input request is the link (never one a browser opened), if it can be asked. */
  signInRound(params: Json): Json | undefined {
    const prompt = this.prompt;
    const elicitation = (clientFromEnvelope(params).capabilities as Json).elicitation;
    if (!prompt || prompt.browserOpened || !isObject(elicitation) || !isObject(elicitation.url))
      return undefined;
    const requestState = `${SIGN_IN_INPUT}/${randomUUID()}`;
    this.#rounds.add(requestState);
    const request = { mode: "url", message: prompt.message, url: prompt.url, elicitationId: randomUUID() };
    return {
      resultType: "input_required",
      inputRequests: { [SIGN_IN_INPUT]: { method: "elicitation/create", params: request } },
      requestState,
    };
  }

  /** The call again after the host showed the link in a sign-in round: its params without the round, or undefined. */
  afterRound(params: Json): Json | undefined {
    if (typeof params.requestState !== "string" || !this.#rounds.delete(params.requestState))
      return undefined;
    const { requestState: _state, inputResponses: _responses, ...rest } = params;
    return rest;
  }

  /** The list changes a host hears once signed in, for the lists the bridge answered (`lists`), on a modern host's listens. */
  listChanges(lists: Iterable<string>, listens: Array<{ id: RequestId; filter: Json }>): JSONRPCMessage[] {
    const kinds = new Set([...lists].map(kindOf));
    const changes = [...kinds].map((kind) => ({ method: changedOf(kind), filter: filterOf(kind) }));
    if (this.legacy) return changes.map(({ method }) => ({ jsonrpc: "2.0", method }) as JSONRPCMessage);
    return listens.flatMap(({ id, filter }) =>
      changes
        .filter((change) => filter[change.filter] === true)
        .map(
          ({ method }) =>
            ({ jsonrpc: "2.0", method, params: { _meta: { [META_SUBSCRIPTION_ID]: id } } }) as JSONRPCMessage,
        ),
    );
  }
}

/** What a host sends while signed out, kept for the server in order: bounded, and one notification of a kind. */

/** At most this many messages wait for the sign-in: a host sends a handful at start; more is a host in a loop. */
export const SIGNED_OUT_QUEUE_LIMIT = 256;
/**
 * At most this many bytes wait (one larger message is still kept while nothing else waits: each is bounded by
 * --max-message-size). 16 calls of 30 MB once took the bridge from 65 to 734 MB.
 */
const SIGNED_OUT_QUEUE_BYTES = 64 * 1024 * 1024;

type Queued = "queued" | "collapsed" | "full";

export class SignedOutQueue {
  /** Insertion-ordered (the order the host sent them in, which is the order the server gets them), with their bytes. */
  readonly #messages = new Map<JSONRPCMessage, number>();
  #bytes = 0;
  /** The one kept message of a method kept once: each notification (the first), `logging/setLevel` (the last). */
  readonly #once = new Map<string, JSONRPCMessage>();
  #fullSaid = false;

  constructor(
    private readonly log: Pick<BridgeLog, "info">,
    readonly limit = SIGNED_OUT_QUEUE_LIMIT,
    readonly maxBytes = SIGNED_OUT_QUEUE_BYTES,
  ) {}

  get size(): number {
    return this.#messages.size;
  }

  /** Keeps `message`; a notification of a method already kept is dropped, a `logging/setLevel` replaces the one kept (`replaced`: its answer was given). */
  push(message: JSONRPCMessage, replaced?: (earlier: JSONRPCMessage) => void): Queued {
    const method = (message as { method?: unknown }).method;
    const once = typeof method === "string" && (!isRequest(message) || method === "logging/setLevel");
    const earlier = once ? this.#once.get(method) : undefined;
    if (earlier && !isRequest(message)) return "collapsed";
    if (earlier) {
      this.remove(earlier);
      replaced?.(earlier);
    }
    const bytes = Buffer.byteLength(JSON.stringify(message));
    if (this.size >= this.limit || (this.size > 0 && this.#bytes + bytes > this.maxBytes)) {
      if (!this.#fullSaid)
        this.log.info(
          `${this.size} messages from the client (at most ${this.limit}, ${this.maxBytes} bytes) wait for ` +
            "the sign-in; later ones are refused until it ends",
        );
      this.#fullSaid = true;
      return "full";
    }
    if (once) this.#once.set(method, message);
    this.#messages.set(message, bytes);
    this.#bytes += bytes;
    return "queued";
  }

  /** Takes `message` out (a held request answered by the bridge, or cancelled): true when it was kept. */
  remove(message: JSONRPCMessage): boolean {
    const bytes = this.#messages.get(message);
    if (bytes === undefined) return false;
    this.#messages.delete(message);
    this.#bytes -= bytes;
    const method = (message as { method?: unknown }).method;
    if (typeof method === "string" && this.#once.get(method) === message) this.#once.delete(method);
    return true;
  }

  /** Everything kept, in order, and the queue emptied. */
  drain(): JSONRPCMessage[] {
    const messages = [...this.#messages.keys()];
    this.#messages.clear();
    this.#bytes = 0;
    this.#once.clear();
    return messages;
  }
}
