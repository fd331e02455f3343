/** `subscriptions/listen` across eras. A 2025-era client's notifications from a 2026-07-28 server: one listen the
 * bridge keeps open for what the server offers (list changes, the resources the client subscribed to), reopened
 * with back-off when it drops, closed at shutdown; its notifications reach the client without the subscription's
 * `_meta`. A 2026-07-28 client's listens over a 2025 session: each acknowledged with what the session delivers, fed
 * the notifications it asked for under its own id, ended on its own (`SessionListens`).
 */

import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { type BridgeLog, describeError } from "../log/log.js";
import { isJsonObject as isObject, type JsonObject as Json, requestKey } from "../messages/jsonrpc.js";
import { type ToClient, withoutEnvelope } from "../messages/request-model.js";
import type { UpstreamAnswer } from "../upstream/modern.js";

export const META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
export const LISTEN_ACKNOWLEDGED = "notifications/subscriptions/acknowledged";
/** The first wait before reopening a dropped listen; doubled on each drop without an acknowledgment, up to the cap. */
export const LISTEN_FIRST_BACKOFF_MS = 500;
export const LISTEN_MAX_BACKOFF_MS = 30_000;
/** Drops in a row (none acknowledged) after which the bridge stops reopening. */
export const LISTEN_MAX_FAILURES = 10;

/** Each list the filter may ask about: its filter field, its capability, and the notification of its changes. */
const LISTS = [
  ["toolsListChanged", "tools", "notifications/tools/list_changed"],
  ["promptsListChanged", "prompts", "notifications/prompts/list_changed"],
  ["resourcesListChanged", "resources", "notifications/resources/list_changed"],
] as const;

/** Whether the server declares `member` of its `kind` capability (`listChanged`, `subscribe`). */
function offers(serverCapabilities: unknown, kind: string, member: string): boolean {
  const capability = isObject(serverCapabilities) ? serverCapabilities[kind] : undefined;
  return isObject(capability) && capability[member] === true;
}

/** The notification filter a legacy client gets: every list change the server declares, and its resource subscriptions. */
export function listenFilter(serverCapabilities: unknown, resourceUris: Iterable<string>): Json {
  const filter: Json = {};
  for (const [field, kind] of LISTS)
    if (offers(serverCapabilities, kind, "listChanged")) filter[field] = true;
  const uris = [...resourceUris];
  if (uris.length > 0) filter.resourceSubscriptions = uris;
  return filter;
}

export interface LegacyListenOptions {
  /** Sends `subscriptions/listen` with this filter (the envelope added by the caller); settles when the stream ends. */
  listen(filter: Json, signal: AbortSignal): Promise<UpstreamAnswer>;
  serverCapabilities: unknown;
  log: BridgeLog;
  firstBackoffMs?: number;
}

export class LegacyListen {
  readonly #options: LegacyListenOptions;
  readonly #resources = new Set<string>();
  #controller: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failures = 0;
  #acknowledged = false;
  #closed = false;

  constructor(options: LegacyListenOptions) {
    this.#options = options;
  }

  /** Opens the stream (again, when the filter changed); nothing to open when the server offers nothing. */
  open(): void {
    if (this.#closed) return;
    this.#controller?.abort();
    clearTimeout(this.#timer);
    const filter = listenFilter(this.#options.serverCapabilities, this.#resources);
    if (Object.keys(filter).length === 0) return;
    const controller = new AbortController();
    this.#controller = controller;
    this.#acknowledged = false;
    this.#options
      .listen(filter, controller.signal)
      .then(
        (answer) => ("error" in answer ? answer.error.message : "the server ended it"),
        (error: unknown) => describeError(error),
      )
      .then((why) => {
        if (controller.signal.aborted || this.#closed) return;
        this.#reopenLater(why);
      });
  }

  /** `resources/subscribe` and `resources/unsubscribe` of the client: the stream reopens with the new list. */
  subscribe(uri: string): void {
    if (this.#resources.has(uri)) return;
    this.#resources.add(uri);
    this.open();
  }

  unsubscribe(uri: string): void {
    if (this.#resources.delete(uri)) this.open();
  }

  /** A server notification as the client gets it (the listen's `_meta` lifted), or undefined for none. */
  fromServer(message: Json): Json | undefined {
    if (message.method === LISTEN_ACKNOWLEDGED) {
      this.#acknowledged = true;
      this.#failures = 0;
      this.#options.log.debug("subscriptions/listen acknowledged");
      return undefined;
    }
    const params = message.params;
    if (!isObject(params) || !isObject(params._meta) || !(META_SUBSCRIPTION_ID in params._meta))
      return message;
    const { [META_SUBSCRIPTION_ID]: _id, ...meta } = params._meta;
    const { _meta: _old, ...rest } = params;
    return { ...message, params: Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest };
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#controller?.abort();
  }

  #reopenLater(why: string): void {
    if (!this.#acknowledged) this.#failures++;
    if (this.#failures >= LISTEN_MAX_FAILURES) {
      this.#options.log.info(
        `subscriptions/listen dropped ${this.#failures} times without an acknowledgment (${why}); list-changed notifications stop`,
      );
      return;
    }
    const first = this.#options.firstBackoffMs ?? LISTEN_FIRST_BACKOFF_MS;
    const delay = Math.min(first * 2 ** Math.max(0, this.#failures - 1), LISTEN_MAX_BACKOFF_MS);
    this.#options.log.debug(`subscriptions/listen ended (${why}); reopening in ${delay} ms`);
    this.#timer = setTimeout(() => this.open(), delay);
    this.#timer.unref();
  }
}

/** The list-change notifications a listen asks for, by the field of its filter that asks. */
const LIST_CHANGED_FIELDS: Readonly<Record<string, string>> = Object.fromEntries(
  LISTS.map(([field, , method]) => [method, field]),
);
/** Notifications a 2026-07-28 client receives only through a `subscriptions/listen` that asked for them. */
const SUBSCRIBED_NOTIFICATIONS: ReadonlySet<string> = new Set([
  ...Object.keys(LIST_CHANGED_FIELDS),
  "notifications/resources/updated",
]);

interface SessionListen {
  id: RequestId;
  filter: Json;
  uris: string[];
}

export class SessionListens {
  readonly #toClient: ToClient;
  /** Sends a request of the bridge's own to the session (a `resources/subscribe` or `unsubscribe`). */
  readonly #toSession: (method: string, params: Json) => void;
  readonly #listens = new Map<string, SessionListen>();
  /** Resources subscribed on the session, with how many listens want each. */
  readonly #subscribed = new Map<string, number>();

  constructor(toClient: ToClient, toSession: (method: string, params: Json) => void) {
    this.#toClient = toClient;
    this.#toSession = toSession;
  }

  /** A listen, acknowledged with what the session can deliver; each resource subscribed once for all listens. */
  open(id: RequestId, params: unknown, initialized: Json): void {
    const lifted = withoutEnvelope(params) ?? {};
    const asked = isObject(lifted.notifications) ? lifted.notifications : {};
    const capabilities = initialized.capabilities;
    const filter: Json = {};
    for (const [field, kind] of LISTS)
      if (asked[field] === true && offers(capabilities, kind, "listChanged")) filter[field] = true;
    const asks = Array.isArray(asked.resourceSubscriptions)
      ? asked.resourceSubscriptions.filter((uri): uri is string => typeof uri === "string")
      : [];
    const uris = offers(capabilities, "resources", "subscribe") ? [...new Set(asks)] : [];
    if (uris.length > 0) filter.resourceSubscriptions = uris;
    this.cancel(id);
    for (const uri of uris) {
      const wanted = this.#subscribed.get(uri) ?? 0;
      this.#subscribed.set(uri, wanted + 1);
      if (wanted === 0) this.#toSession("resources/subscribe", { uri });
    }
    this.#listens.set(requestKey(id), { id, filter, uris });
    this.#toClient({
      jsonrpc: "2.0",
      method: LISTEN_ACKNOWLEDGED,
      params: { _meta: { [META_SUBSCRIPTION_ID]: id }, notifications: filter },
    } as JSONRPCMessage);
  }

  /** Ends the listen `id` (the client cancelled it): resources no other listen wants are unsubscribed. False: none. */
  cancel(id: RequestId): boolean {
    const listen = this.#listens.get(requestKey(id));
    if (!listen) return false;
    this.#listens.delete(requestKey(id));
    for (const uri of listen.uris) {
      const wanted = (this.#subscribed.get(uri) ?? 1) - 1;
      if (wanted > 0) {
        this.#subscribed.set(uri, wanted);
        continue;
      }
      this.#subscribed.delete(uri);
      this.#toSession("resources/unsubscribe", { uri });
    }
    return true;
  }

  /** A session notification to each listen that asked; true when only a listen may carry it (none: dropped). */
  deliver(value: Json): boolean {
    const method = String(value.method);
    if (!SUBSCRIBED_NOTIFICATIONS.has(method)) return false;
    const field = LIST_CHANGED_FIELDS[method];
    const params = isObject(value.params) ? value.params : {};
    for (const listen of this.#listens.values()) {
      const wanted =
        field !== undefined
          ? listen.filter[field] === true
          : typeof params.uri === "string" && listen.uris.includes(params.uri);
      if (!wanted) continue;
      const meta = isObject(params._meta) ? params._meta : {};
      this.#toClient({
        jsonrpc: "2.0",
        method,
        params: { ...params, _meta: { ...meta, [META_SUBSCRIPTION_ID]: listen.id } },
      } as JSONRPCMessage);
    }
    return true;
  }
}
