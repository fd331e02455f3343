/** A 2026-07-28 client's `subscriptions/listen` requests over a 2025 session: each acknowledged with what the session delivers, fed the notifications it asked for under its own id, ended on its own. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { isJsonObject as isObject, type JsonObject as Json, requestKey } from "../messages/jsonrpc.js";
import type { ToClient } from "../messages/request-model.js";
import { withoutEnvelope } from "../messages/request-model.js";
import { LISTEN_ACKNOWLEDGED, META_SUBSCRIPTION_ID } from "./listen.js";

/** The list-change notifications a listen asks for, by the field of its filter that asks. */
const LIST_CHANGED_FIELDS: Readonly<Record<string, string>> = {
  "notifications/tools/list_changed": "toolsListChanged",
  "notifications/prompts/list_changed": "promptsListChanged",
  "notifications/resources/list_changed": "resourcesListChanged",
};
const RESOURCE_UPDATED = "notifications/resources/updated";
/** Notifications a 2026-07-28 client receives only through a `subscriptions/listen` that asked for them. */
const SUBSCRIBED_NOTIFICATIONS: ReadonlySet<string> = new Set([
  ...Object.keys(LIST_CHANGED_FIELDS),
  RESOURCE_UPDATED,
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

  /**
   * A listen: acknowledged with what the 2025 session can deliver (the list changes the server declares; updates of
   * resources when it supports subscribing, each resource subscribed once however many listens want it).
   */
  open(id: RequestId, params: unknown, initialized: Json): void {
    const lifted = withoutEnvelope(params) ?? {};
    const asked = isObject(lifted.notifications) ? lifted.notifications : {};
    const capabilities = isObject(initialized.capabilities) ? initialized.capabilities : {};
    const offers = (kind: string, member: string) => {
      const capability = capabilities[kind];
      return isObject(capability) && capability[member] === true;
    };
    const filter: Json = {};
    for (const [field, kind] of [
      ["toolsListChanged", "tools"],
      ["promptsListChanged", "prompts"],
      ["resourcesListChanged", "resources"],
    ] as const)
      if (asked[field] === true && offers(kind, "listChanged")) filter[field] = true;
    const asks = Array.isArray(asked.resourceSubscriptions)
      ? asked.resourceSubscriptions.filter((uri): uri is string => typeof uri === "string")
      : [];
    const uris = offers("resources", "subscribe") ? [...new Set(asks)] : [];
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

  /**
   * A session notification: to each listen that asked for it, stamped with its subscription id. True when it was
   * one a listen may ask for (delivered, or dropped because none asked: the client must not get it unasked).
   */
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
