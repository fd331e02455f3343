/** The bridge's option values as commander hands them over: ports, seconds, resource URLs, profile names. */
import { InvalidArgumentError } from "commander";
import { timerMilliseconds, timerSecondsRange } from "../../internal/deadline.js";
import { portNumber } from "../../internal/port.js";
import { MAX_MESSAGE_MIB_LIMIT } from "../messages/message-size.js";

/** `--profile` names: letters, digits, `.`, `_` and `-`, up to 64, starting with a letter or digit. */
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function parsePort(value: string): number {
  const port = portNumber(value, { allowZero: false });
  if (port === undefined) throw new InvalidArgumentError("expected a port, 1-65535");
  return port;
}

export function parseResource(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
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
