/**
 * Where a modern (2026-07-28) client meets a 2025-era server: the bridge opens the legacy session itself (an
 * `initialize` from the client's envelope), answers `server/discover` from its result, lifts the envelope off
 * each request and marks each result complete. A legacy client's messages pass through untouched.
 */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { EraRelay } from "../era-router.js";
import { requestEra } from "../faces/modern.js";
import type { BridgeLog } from "../log.js";
import type { ToClient } from "../request-model.js";
import { clientFromEnvelope, LATEST_LEGACY_VERSION, withoutEnvelope } from "../request-model.js";
import { asModernResult, discoverFromInitializeResult } from "./discover.js";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const requestKey = (id: RequestId): string => (typeof id === "number" ? `n${id}` : `s${id}`);

export class ModernClientOverLegacy implements EraRelay {
  readonly #relay: EraRelay;
  readonly #toClient: ToClient;
  readonly #log: BridgeLog;
  readonly #initializeId = `chat-mcp-bridge/${randomUUID()}/initialize`;
  /** The session the bridge opened for the modern client: the server's InitializeResult. */
  #session: Promise<Json> | undefined;
  #sessionAnswer: ((message: Json) => void) | undefined;
  /** Modern requests in flight, by id, with their method: their results get `resultType` (and cache hints). */
  readonly #modernIds = new Map<string, string>();

  /** `openRelay` builds the legacy relay with the toClient it must call (this translator's). */
  constructor(openRelay: (toClient: ToClient) => EraRelay, toClient: ToClient, log: BridgeLog) {
    this.#toClient = toClient;
    this.#log = log;
    this.#relay = openRelay((message, raw) => this.#fromServer(message, raw));
  }

  fromClient(message: JSONRPCMessage): void {
    const value = message as Json;
    const method = typeof value.method === "string" ? value.method : undefined;
    if (method === undefined || !("id" in value) || requestEra(method, value.params) !== "modern") {
      this.#relay.fromClient(message);
      return;
    }
    void this.#modernRequest(value.id as RequestId, method, value.params);
  }

  close(timeoutMs?: number): Promise<void> | void {
    return this.#relay.close(timeoutMs);
  }

  async #modernRequest(id: RequestId, method: string, params: unknown): Promise<void> {
    let initialized: Json;
    try {
      initialized = await this.#openSession(params);
    } catch (error) {
      this.#toClient({ jsonrpc: "2.0", id, error: error as { code: number; message: string } });
      return;
    }
    if (method === "server/discover") {
      this.#toClient({
        jsonrpc: "2.0",
        id,
        result: discoverFromInitializeResult(initialized),
      } as JSONRPCMessage);
      return;
    }
    this.#modernIds.set(requestKey(id), method);
    const lifted = withoutEnvelope(params);
    this.#relay.fromClient({
      jsonrpc: "2.0",
      id,
      method,
      ...(lifted ? { params: lifted } : {}),
    } as JSONRPCMessage);
  }

  /** The legacy session, opened once with what the first modern request's envelope says of its client. */
  #openSession(params: unknown): Promise<Json> {
    this.#session ??= new Promise<Json>((resolve, reject) => {
      const client = clientFromEnvelope(params);
      this.#sessionAnswer = (answer) => {
        if (isObject(answer.result)) {
          this.#relay.fromClient({ jsonrpc: "2.0", method: "notifications/initialized" });
          resolve(answer.result);
        } else {
          this.#session = undefined;
          reject(isObject(answer.error) ? answer.error : { code: -32000, message: "initialize failed" });
        }
      };
      this.#relay.fromClient({
        jsonrpc: "2.0",
        id: this.#initializeId,
        method: "initialize",
        params: {
          protocolVersion: LATEST_LEGACY_VERSION,
          capabilities: client.capabilities,
          clientInfo: client.clientInfo,
        },
      } as JSONRPCMessage);
    });
    return this.#session;
  }

  #fromServer(message: JSONRPCMessage, raw?: string): void {
    const value = message as Json;
    if (!("method" in value) && value.id === this.#initializeId) {
      this.#sessionAnswer?.(value);
      return;
    }
    if (!("method" in value) && (typeof value.id === "string" || typeof value.id === "number")) {
      const key = requestKey(value.id);
      const method = this.#modernIds.get(key);
      this.#modernIds.delete(key);
      if (method !== undefined && isObject(value.result)) {
        const result = asModernResult(method, value.result);
        this.#toClient({ ...value, result } as unknown as JSONRPCMessage);
        return;
      }
    }
    if ("method" in value && "id" in value && this.#modernIds.size > 0 && this.#session) {
      // A 2026 client takes no requests mid-call; its call fails cleanly instead of hanging on an answer.
      this.#log.info(
        `the server asked ${String(value.method)} of a 2026-07-28 client, which cannot take it; refused`,
      );
      this.#relay.fromClient({
        jsonrpc: "2.0",
        id: value.id as RequestId,
        error: {
          code: -32601,
          message: "chat-mcp-bridge: a 2026-07-28 client takes no requests from the server",
        },
      } as JSONRPCMessage);
      return;
    }
    this.#toClient(message, raw);
  }
}
