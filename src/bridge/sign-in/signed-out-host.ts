/** The host as a signed-out bridge meets it: whether it waits, how it reloads, where it is shown the sign-in link (its URL dialog, a call's sign-in round, its log), and the answers and list changes it gets. */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
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
import { asModernResult } from "../translate/discover.js";
import { LISTEN_ACKNOWLEDGED, META_SUBSCRIPTION_ID } from "../translate/listen.js";

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

/** A list request's answer while signed out: `items` (for tools: never none). */
export function signedOutListResult(method: string, modern: boolean, items: Json[]): Json {
  const result: Json = { [LISTS[method]!]: items };
  return modern ? asModernResult(method, result) : result;
}

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

/** The host the gate serves: what it told of itself, and the places it is shown the sign-in link. */
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

  /**
   * The host's log (`notifications/message`), only for a legacy host that asked for log messages
   * (`logging/setLevel`): some hosts fail on a notification they did not ask for (the Vercel AI SDK).
   */
  notify(text: string): void {
    if (!this.legacy || !this.#initialized || !this.#takesLogs) return;
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

  /**
   * The 2026-07-28 way to show the link: an `input_required` round on a modern call that takes URL-mode elicitation,
   * whose one input request is the link (never one a browser was opened on); undefined when it cannot be asked.
   */
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
