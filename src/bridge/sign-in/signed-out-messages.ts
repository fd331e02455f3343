/** The messages the bridge answers a host with while it signs in: its lists (the sign_in tool), list changes, listen acknowledgments, the sign-in round of a modern call. */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { SignInPrompt } from "../../auth/index.js";
import { describeError } from "../log/log.js";
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";
import { clientFromEnvelope } from "../messages/request-model.js";
import { asModernResult } from "../translate/discover.js";
import { LISTEN_ACKNOWLEDGED, META_SUBSCRIPTION_ID } from "../translate/listen.js";
import { SignInUrlRefused } from "../upstream/http/endpoint-check.js";

/** The empty answer of each list request while signed out, the notification that says it changed, its listen filter. */
const LISTS: Record<string, { key: string; changed: string; filter: string }> = {
  "tools/list": { key: "tools", changed: "notifications/tools/list_changed", filter: "toolsListChanged" },
  "prompts/list": {
    key: "prompts",
    changed: "notifications/prompts/list_changed",
    filter: "promptsListChanged",
  },
  "resources/list": {
    key: "resources",
    changed: "notifications/resources/list_changed",
    filter: "resourcesListChanged",
  },
  "resources/templates/list": {
    key: "resourceTemplates",
    changed: "notifications/resources/list_changed",
    filter: "resourcesListChanged",
  },
};

/** The key of the bridge's own input request (the sign-in link) in a modern call's `input_required` round. */
export const SIGN_IN_INPUT = "chat-mcp-bridge/sign-in";

export const isListMethod = (method: string): boolean => method in LISTS;

/** A list request's answer while signed out: `items` (for tools: never none), and a list change follows the sign-in. */
export function signedOutListResult(method: string, modern: boolean, items: Json[] = []): Json {
  const result: Json = { [LISTS[method]!.key]: items };
  return modern ? asModernResult(method, result) : result;
}

/** The one tool of a host signed out with no tools remembered: it says where and how to sign in, and signs in. */
export const SIGN_IN_TOOL = "sign_in";

/** The `sign_in` tool, its description the words a person needs (`text`): the link or code, and how this host reloads. */
export function signInTool(text: string): Json {
  return {
    name: SIGN_IN_TOOL,
    title: "Sign in to chat",
    description: text,
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}

/**
 * The list changes a host hears once signed in, for the lists it was answered empty (`listed`): a legacy host's
 * notifications, or on each of a modern host's listens. A list the server answered needs none (and some hosts
 * fail on a notification: the Vercel AI SDK).
 */
export function listChangeNotifications(host: {
  legacy: boolean;
  listed: Iterable<string>;
  listens: Array<{ id: RequestId; filter: Json }>;
}): JSONRPCMessage[] {
  const changedLists = new Set<string>();
  for (const method of host.listed) if (LISTS[method]) changedLists.add(LISTS[method].changed);
  if (host.legacy) return [...changedLists].map((method) => ({ jsonrpc: "2.0", method }) as JSONRPCMessage);
  const messages: JSONRPCMessage[] = [];
  for (const listen of host.listens) {
    const changed = new Set<string>();
    for (const list of Object.values(LISTS))
      if (listen.filter[list.filter] === true && changedLists.has(list.changed)) changed.add(list.changed);
    for (const method of changed) {
      messages.push({
        jsonrpc: "2.0",
        method,
        params: { _meta: { [META_SUBSCRIPTION_ID]: listen.id } },
      } as JSONRPCMessage);
    }
  }
  return messages;
}

/** A modern host's listen, acknowledged by the bridge: the list changes it asked for, which the bridge announces. */
export function listenAcknowledgment(id: RequestId, filter: Json): JSONRPCMessage {
  const honoured: Json = {};
  for (const list of Object.values(LISTS)) if (filter[list.filter] === true) honoured[list.filter] = true;
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

/**
 * The 2026-07-28 way to show the sign-in link: an `input_required` round on a modern host's call, whose one input
 * request is a URL elicitation; the call comes back with the round's `requestState`, each used once.
 */
export class SignInRounds {
  readonly #states = new Set<string>();

  /** A modern host that takes URL-mode elicitation, and a link no browser was opened on (one browser per link). */
  canAsk(params: Json, prompt: SignInPrompt): boolean {
    if (prompt.browserOpened) return false;
    const elicitation = (clientFromEnvelope(params).capabilities as Json).elicitation;
    return isObject(elicitation) && isObject(elicitation.url);
  }

  ask(prompt: SignInPrompt): Json {
    const requestState = `${SIGN_IN_INPUT}/${randomUUID()}`;
    this.#states.add(requestState);
    return {
      resultType: "input_required",
      inputRequests: {
        [SIGN_IN_INPUT]: {
          method: "elicitation/create",
          params: { mode: "url", message: prompt.message, url: prompt.url, elicitationId: randomUUID() },
        },
      },
      requestState,
    };
  }

  /** The call again after the host showed the link: its params without the bridge's round, or undefined. */
  after(params: Json): Json | undefined {
    if (typeof params.requestState !== "string" || !this.#states.delete(params.requestState))
      return undefined;
    const { requestState: _state, inputResponses: _responses, ...rest } = params;
    return rest;
  }
}

/** A legacy host's URL-mode elicitation request (MCP 2025-11-25) for the sign-in link. */
export function signInElicitation(id: string, elicitationId: string, prompt: SignInPrompt): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    method: "elicitation/create",
    params: { mode: "url", message: prompt.message, url: prompt.url, elicitationId },
  } as JSONRPCMessage;
}

/** What the host is told of a sign-in that has not ended: the link and what to do, or why it failed. */
export function signedOutText(state: {
  serverUrl: string;
  loginCommand: string;
  lastFailure: Error | undefined;
  prompt: SignInPrompt | undefined;
  tool: string | undefined;
}): string {
  const again = state.tool ? `call ${state.tool} again` : "try again";
  const failure = state.lastFailure && describeError(state.lastFailure);
  // The URL is not the MCP endpoint: signing in again there cannot help.
  if (state.lastFailure instanceof SignInUrlRefused)
    return (
      `Not signed in to ${state.serverUrl}: ${failure} ` +
      "Change the URL in this MCP server's configuration (the bridge's last argument), then restart it."
    );
  if (failure)
    return (
      `Not signed in to ${state.serverUrl}: ${failure} ` +
      `To sign in, ${again} (a new sign-in starts), or run \`${state.loginCommand}\` in a terminal.`
    );
  // A host that cannot wait (one process per request) still has the terminal: the login command is named.
  const orLogin = `If this MCP host cannot wait for the sign-in, run \`${state.loginCommand}\` in a terminal.`;
  if (state.prompt) {
    const named = state.prompt.message.includes(state.loginCommand) ? "" : ` ${orLogin}`;
    return `${state.prompt.message} When you have signed in, ${again}.${named}`;
  }
  return `Signing in to ${state.serverUrl}: the sign-in page is being prepared. Finish signing in, then ${again}. ${orLogin}`;
}

/** A request past the signed-out queue's bound: refused, saying what to do. */
export function queueFullAnswer(
  id: RequestId,
  limit: number,
  serverUrl: string,
  loginCommand: string,
): JSONRPCMessage {
  const message =
    `chat-mcp-bridge: ${limit} requests are already waiting for the sign-in to ${serverUrl}; this one was not ` +
    `kept. Finish signing in (or run \`${loginCommand}\` in a terminal), then send it again.`;
  return { jsonrpc: "2.0", id, error: { code: -32000, message } } as JSONRPCMessage;
}

/** What a call gets when the sign-in has not ended in time: a tool error the host shows, else a JSON-RPC error. */
export function signedOutAnswer(
  id: RequestId,
  method: string,
  text: string,
  modern: boolean,
): JSONRPCMessage {
  if (method === "tools/call") {
    const result: Json = { content: [{ type: "text", text }], isError: true };
    return {
      jsonrpc: "2.0",
      id,
      result: modern ? { ...result, resultType: "complete" } : result,
    } as JSONRPCMessage;
  }
  return {
    jsonrpc: "2.0",
    id,
    error: { code: -32001, message: `chat-mcp-bridge: ${text}` },
  } as JSONRPCMessage;
}
