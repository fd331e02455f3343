/** Learns a server's protocol era as the spec says (a `server/discover` probe) and remembers the verdict per server, with an expiry. */

import { rm } from "node:fs/promises";
import { join } from "node:path";
import { loginKey } from "../../auth/login-key.js";
import { configDir } from "../../config/index.js";
import { readOwnFile, writeFileAtomic } from "../../internal/files.js";
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";
import {
  BRIDGE_INFO,
  type ClientContext,
  LATEST_MODERN_VERSION,
  withEnvelope,
} from "../messages/request-model.js";
import { RemoteHttpError, ServerUnreachable } from "./http/http-exchange.js";
import { heardNothing, type ModernUpstream } from "./modern.js";

export type EraVerdict = { era: "modern"; discover: Json; protocolVersion: string } | { era: "legacy" };

/** The 2026-07-28 error codes only a modern server answers with: header mismatch, missing capability, unsupported version. */
export const MODERN_ERROR_CODES = new Set([-32020, -32021, -32022]);
/** The most of a verdict file read (a discover result is a few KiB). */
const MAX_VERDICT_BYTES = 1024 * 1024;
/** How long a remembered verdict is trusted before the next start probes again. */
export const VERDICT_TTL_MS = 24 * 60 * 60 * 1000;

/** The bridge's own identity on a probe made before any client has spoken. */
export const BRIDGE_CLIENT: ClientContext = {
  era: "modern",
  protocolVersion: LATEST_MODERN_VERSION,
  capabilities: {},
  clientInfo: BRIDGE_INFO,
};

/**
 * Probes with `server/discover`: a DiscoverResult or a modern error means modern, any other answer legacy. A 401/403
 * is no evidence (thrown), nor is no answer at all (thrown as ServerUnreachable).
 */
export async function probeServerEra(upstream: ModernUpstream, client = BRIDGE_CLIENT): Promise<EraVerdict> {
  // The upstream makes the spec's corrective retry itself on an unsupported version (-32022).
  const answer = await upstream.request(
    "server/discover",
    withEnvelope(undefined, client, LATEST_MODERN_VERSION),
  );
  if ("result" in answer) {
    return Array.isArray(answer.result.supportedVersions)
      ? { era: "modern", discover: answer.result, protocolVersion: upstream.protocolVersion }
      : { era: "legacy" };
  }
  if (heardNothing(answer.error)) throw new ServerUnreachable(answer.error.message);
  if (!isEvidence(answer.error))
    throw new RemoteHttpError(
      httpStatusOf(answer.error) ?? 500,
      `the era probe got no usable answer (${answer.error.message})`,
    );
  if (!MODERN_ERROR_CODES.has(answer.error.code)) return { era: "legacy" };
  throw new RemoteHttpError(400, `the server is modern but refused server/discover: ${answer.error.message}`);
}

/** The HTTP status the bridge saw, on its own error for a non-2xx answer without a JSON-RPC body. */
function httpStatusOf(error: { data?: unknown }): number | undefined {
  const status = (error.data as { httpStatus?: unknown } | undefined)?.httpStatus;
  return typeof status === "number" ? status : undefined;
}

/** Whether an error answer says anything of the era: a 5xx, a 429 or an internal error says only "not now". */
function isEvidence(error: { code: number; data?: unknown }): boolean {
  const status = httpStatusOf(error);
  if (status !== undefined && (status >= 500 || status === 429)) return false;
  return error.code !== -32603;
}

/** Remembered verdicts, one small JSON file per server (keyed like its login) beside the logins. */
export class EraVerdictStore {
  readonly #file: string;
  readonly #now: () => number;

  constructor(configDir: string, serverKey: string, now: () => number = Date.now) {
    this.#file = join(configDir, "eras", `${serverKey}.json`);
    this.#now = now;
  }

  get path(): string {
    return this.#file;
  }

  /** The fresh verdict; none when expired, unreadable, a link or another user's (its `instructions` reach the host). */
  async read(): Promise<EraVerdict | undefined> {
    let stored: unknown;
    try {
      stored = JSON.parse((await readOwnFile(this.#file, MAX_VERDICT_BYTES)) ?? "");
    } catch {
      return undefined;
    }
    if (!isObject(stored) || typeof stored.expiresAt !== "number" || stored.expiresAt <= this.#now())
      return undefined;
    if (stored.era === "legacy") return { era: "legacy" };
    if (stored.era === "modern" && isObject(stored.discover) && typeof stored.protocolVersion === "string")
      return { era: "modern", discover: stored.discover, protocolVersion: stored.protocolVersion };
    return undefined;
  }

  /** Forgets the verdict (`logout`): the next start probes again. */
  async forget(): Promise<void> {
    await rm(this.#file, { force: true });
  }

  /** Remembers a verdict (best effort: a store that cannot be written only costs a probe next time). */
  write(verdict: EraVerdict): void {
    try {
      writeFileAtomic(this.#file, JSON.stringify({ ...verdict, expiresAt: this.#now() + VERDICT_TTL_MS }), {
        privateFolder: true,
      });
    } catch {}
  }
}

/** Where the server's era verdict is remembered: keyed like its login (the relay and doctor's era check share it). */
export function eraVerdictStore(
  options: { url: URL; headers: readonly { name: string }[]; profile?: string; resource?: string },
  env: Record<string, string | undefined>,
): EraVerdictStore {
  return new EraVerdictStore(
    configDir(env),
    loginKey(
      options.url.href,
      options.headers.map((header) => header.name),
      { profile: options.profile, resource: options.resource },
    ),
  );
}
