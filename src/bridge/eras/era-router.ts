/** Routes the stdio client to the relay for the server's era: the legacy relay (sessions) or the modern one
 * (stateless). Nothing happens before the first message; the era comes from the remembered verdict, else
 * from a probe made when the first message arrives.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { type BridgeLog, describeError } from "../log/log.js";
import type { EraRelay, ToClient } from "../messages/request-model.js";
import { bridgeDiscoverResult } from "../translate/discover.js";
import { isNetworkError } from "../upstream/http/http-exchange.js";
import type { EraVerdict } from "../upstream/probe.js";

type Json = Record<string, unknown>;

export interface EraRouterOptions {
  toClient: ToClient;
  log: BridgeLog;
  /** The remembered verdict, if any (read before the first message arrives is fine: it is a file read). */
  remembered(): Promise<EraVerdict | undefined>;
  /** Probes the server (may sign in: only for a message that needs the server). */
  probe(): Promise<EraVerdict>;
  /** Probes with the stored login only, never signing in; rejects when that cannot tell. */
  probeQuietly(): Promise<EraVerdict>;
  remember(verdict: EraVerdict): void;
  legacyRelay(): Promise<EraRelay>;
  modernRelay(verdict: Extract<EraVerdict, { era: "modern" }>): Promise<EraRelay>;
}

export class EraRouter {
  readonly #options: EraRouterOptions;
  #relay: EraRelay | undefined;
  #opening: Promise<EraRelay | undefined> | undefined;
  #held: JSONRPCMessage[] = [];
  #closing = false;

  constructor(options: EraRouterOptions) {
    this.#options = options;
  }

  fromClient(message: JSONRPCMessage): void {
    if (this.#closing) return;
    const value = message as Json;
    if (!this.#relay && value.method === "server/discover" && "id" in value && this.#held.length === 0) {
      void this.#answerDiscover(message);
      return;
    }
    this.#hold(message);
  }

  #hold(message: JSONRPCMessage): void {
    if (this.#relay) this.#relay.fromClient(message);
    else {
      this.#held.push(message);
      this.#opening ??= this.#open();
    }
  }

  async close(timeoutMs?: number): Promise<void> {
    this.#closing = true;
    const relay = this.#relay ?? (await this.#opening?.catch(() => undefined));
    await relay?.close(timeoutMs);
  }

  /**
   * A probing host's `server/discover` before the era is known, from the remembered verdict or a quiet probe (never
   * a sign-in): a legacy server's answer through the relay's session; signed out, the bridge's own face.
   */
  async #answerDiscover(message: JSONRPCMessage): Promise<void> {
    const { log, toClient } = this.#options;
    const id = (message as { id: string | number }).id;
    let verdict = await this.#options.remembered();
    if (!verdict) {
      verdict = await this.#options.probeQuietly().catch((error: unknown) => {
        log.debug(`server/discover answered by the bridge itself: ${describeError(error)}`);
        return undefined;
      });
      if (verdict) this.#options.remember(verdict);
    }
    // A legacy server: the relay opens its session and answers from the server's InitializeResult.
    if (verdict?.era === "legacy") return this.#hold(message);
    toClient({
      jsonrpc: "2.0",
      id,
      result: bridgeDiscoverResult(verdict?.era === "modern" ? verdict.discover : undefined),
    } as JSONRPCMessage);
  }

  async #open(): Promise<EraRelay | undefined> {
    const { log } = this.#options;
    let verdict = await this.#options.remembered();
    try {
      if (!verdict) {
        verdict = await this.#options.probe();
        this.#options.remember(verdict);
        log.debug(`the server speaks the ${verdict.era} protocol era`);
      }
    } catch (error) {
      if (!isNetworkError(error)) {
        this.#failHeld(describeError(error));
        this.#opening = undefined;
        return undefined;
      }
      // Unreachable, so no evidence: the legacy relay takes over, since it holds requests until the server is back.
      log.debug(`the era probe failed (${describeError(error)}); relaying as to a 2025-era server`);
      verdict = { era: "legacy" };
    }
    const relay =
      verdict.era === "modern" ? await this.#options.modernRelay(verdict) : await this.#options.legacyRelay();
    this.#relay = relay;
    const held = this.#held;
    this.#held = [];
    for (const message of held) relay.fromClient(message);
    return relay;
  }

  /** Answers every held request with the error that stopped the bridge from reaching the server. */
  #failHeld(reason: string): void {
    const held = this.#held;
    this.#held = [];
    for (const message of held) {
      const value = message as Json;
      if ("method" in value && "id" in value)
        this.#options.toClient({
          jsonrpc: "2.0",
          id: value.id as string | number,
          error: { code: -32000, message: `chat-mcp-bridge: ${reason}` },
        });
    }
  }
}
