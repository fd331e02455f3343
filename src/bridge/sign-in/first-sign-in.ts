/** The relay's first sign-in, as the sign-in gate runs it: signed in or not, one sign-in carried to its end through the era probe, and the tools this login listed last. */
import { join } from "node:path";
import * as z from "zod";
import { loginKey } from "../../auth/login-key.js";
import type { OAuthSession } from "../../auth/session/oauth-session.js";
import { configDir } from "../../config/index.js";
import { readOwnFile, writeFileAtomic } from "../../internal/files.js";
import type { JsonObject as Json } from "../messages/jsonrpc.js";
import type { EraVerdict } from "../upstream/probe.js";
import type { LastTools, SignInGateOptions } from "./sign-in-gate.js";

/**
 * How long a request made while signed out waits for the sign-in (a call from its arrival, a waiting host's lists
 * from its first message): inside the 60 s request time-out of the MCP SDKs most hosts are built on.
 */
export const SIGN_IN_WAIT_MS = 45_000;

export interface FirstSignInParts {
  auth: OAuthSession;
  /** Throws when the URL is known not to be an MCP endpoint, before anything signs in. */
  refuseUrl?: () => Promise<void>;
  /** The remembered era, read at start. */
  knownVerdict(): Promise<EraVerdict | undefined>;
  /** Probes the server's era through an HTTP exchange that may sign in; the verdict is remembered. */
  probe(): Promise<EraVerdict>;
  remember(verdict: EraVerdict): void;
  /** Whether the server has asked for authorization in this process (a 401 or 403 met by the probe). */
  authorizationAsked(): boolean;
}

/** What the sign-in gate needs to know and do about signing in. */
export function firstSignIn(
  parts: FirstSignInParts,
): Pick<SignInGateOptions, "signedIn" | "rememberedDiscover" | "signIn"> {
  const { auth } = parts;
  return {
    // A remembered era with nothing stored: the server let this bridge in without a sign-in last time.
    signedIn: async () =>
      (await auth.accessToken()) !== undefined ||
      ((await parts.knownVerdict()) !== undefined && (await auth.describeLogin()) === undefined),
    rememberedDiscover: async (): Promise<Json | undefined> => {
      const verdict = await parts.knownVerdict();
      return verdict?.era === "modern" ? verdict.discover : undefined;
    },
    // The era probe meets the 401 and signs in; when the sign-in waits for the person, it is awaited here.
    signIn: async () => {
      await parts.refuseUrl?.();
      for (let attempt = 0; ; attempt++) {
        try {
          parts.remember(await parts.probe());
          return true;
        } catch (error) {
          const running = auth.signInSettled();
          if (running && attempt === 0) {
            await running;
            continue;
          }
          // Signed in, but the server's era is still unknown: the era router finds it out. And a
          // server that never asked for authorization is the relay's to report (unreachable, silent).
          if (!parts.authorizationAsked()) return false;
          if (await auth.accessToken().catch(() => undefined)) return true;
          throw error;
        }
      }
    },
  };
}

/** A remembered list larger than this is not kept (nor read): a signed-out start then offers the sign_in tool. */
const MAX_LAST_TOOLS_BYTES = 4 * 1024 * 1024;

const LastToolsSchema = z.object({ tools: z.array(z.looseObject({ name: z.string() })).min(1) });

/**
 * Where the tools this login listed last are kept: keyed like its login, beside its era verdict (0600 in a 0700
 * folder). Best effort both ways: a list that cannot be read or written only costs the sign_in tool next time.
 */
export function lastToolsStore(
  options: { url: URL; headers: readonly { name: string }[]; profile?: string; resource?: string },
  env: Record<string, string | undefined>,
): LastTools & { path: string } {
  const key = loginKey(
    options.url.href,
    options.headers.map((header) => header.name),
    { profile: options.profile, resource: options.resource },
  );
  const path = join(configDir(env), "tools", `${key}.json`);
  return {
    path,
    read: async () => {
      const text = await readOwnFile(path, MAX_LAST_TOOLS_BYTES);
      if (!text) return undefined;
      try {
        const parsed = LastToolsSchema.safeParse(JSON.parse(text));
        return parsed.success ? (parsed.data.tools as Json[]) : undefined;
      } catch {
        return undefined;
      }
    },
    write: (tools) => {
      const text = JSON.stringify({ tools });
      if (tools.length === 0 || text.length > MAX_LAST_TOOLS_BYTES) return;
      try {
        writeFileAtomic(path, text, { privateFolder: true });
      } catch {
        // Not kept: the next signed-out start offers the sign_in tool instead.
      }
    },
  };
}
