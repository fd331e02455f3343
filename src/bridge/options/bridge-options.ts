/** The bridge's options: the shape the command line parses them into, and the values commander hands over (ports, seconds, resource URLs, profile names). */
import { InvalidArgumentError } from "commander";
import { timerMilliseconds, timerSecondsRange } from "../../internal/deadline.js";
import { portNumber } from "../../internal/port.js";
import { MAX_MESSAGE_MIB_LIMIT } from "../messages/message-size.js";
import type { CustomHeader } from "./custom-headers.js";
import type { NetworkFlagOptions } from "./network-flags.js";
import type { AssertionBridgeOptions } from "./sign-in-options.js";

export type TokenStoreChoice = "auto" | "keychain" | "file";

/** Everything the bridge needs to run, parsed and checked: each field the value of its flag (named as in the help). */
export interface BridgeOptions extends AssertionBridgeOptions, NetworkFlagOptions {
  url: URL;
  headers: CustomHeader[];
  callbackPort?: number;
  openBrowser: boolean;
  deviceCode?: boolean;
  authTimeoutMs?: number;
  tokenStore: TokenStoreChoice;
  allowHttp: boolean;
  debug: boolean;
  clientId?: string;
  /** From `$CHAT_MCP_CLIENT_SECRET`, never from a flag. */
  clientSecret?: string;
  clientMetadataUrl?: string;
  clientCredentials?: boolean;
  /** `--client-private-key`: the PEM file of a `private_key_jwt` client (read when the session is built). */
  clientPrivateKeyFile?: string;
  ignoreTools?: string[];
  readOnly?: boolean;
  confirmTools?: string[];
  logFile?: string;
  silent?: boolean;
  /** `--host` */
  callbackHost?: string;
  resource?: string;
  profile?: string;
  /** `--authorize-param key=value`s (a later value of a key wins). */
  authorizeParams?: Record<string, string>;
  disableResourceParameter?: boolean;
  /** `--static-oauth-client-metadata` */
  clientMetadata?: Record<string, unknown>;
  /** `--max-message-size`, in bytes. */
  maxMessageBytes: number;
}

/** `doctor`'s options: the URL stays raw (a bad one is its first failed check), plus `--json` and `--sign-in`. */
export type DoctorCommandOptions = Omit<BridgeOptions, "url"> & {
  url?: undefined;
  json: boolean;
  signIn: boolean;
};

/** doctor's URL: as typed, and parsed, or why it cannot be (doctor reports that as its first failed check). */
export interface DoctorTarget {
  raw: string;
  url?: URL;
  problem?: string;
}

/** `--profile` names: letters, digits, `.`, `_` and `-`, up to 64, starting with a letter or digit. */
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function parsePort(value: string): number {
  const port = portNumber(value, { allowZero: false });
  if (port === undefined) throw new InvalidArgumentError("expected a port, 1-65535");
  return port;
}

export function parseResource(value: string): string {
  const url = URL.parse(value);
  if ((url?.protocol !== "https:" && url?.protocol !== "http:") || url.hash)
    throw new InvalidArgumentError("expected an http(s) URL without a fragment");
  return value;
}

export function parseProfile(value: string): string {
  if (!PROFILE_NAME.test(value))
    throw new InvalidArgumentError("expected a name of letters, digits, '.', '_' or '-' (up to 64)");
  return value;
}

/** `--max-message-size <MiB>`, in bytes. */
export function parseMessageSize(value: string): number {
  const mib = Number(value);
  if (value.trim() === "" || !Number.isFinite(mib) || mib < 1 || mib > MAX_MESSAGE_MIB_LIMIT)
    throw new InvalidArgumentError(`expected a size in MiB, 1-${MAX_MESSAGE_MIB_LIMIT}`);
  return Math.round(mib * 1024 * 1024);
}

/** A seconds flag that becomes a timer, in milliseconds. */
export function parseSeconds(value: string): number {
  const ms = timerMilliseconds(value);
  if (ms === undefined) throw new InvalidArgumentError(`expected ${timerSecondsRange()}`);
  return ms;
}
