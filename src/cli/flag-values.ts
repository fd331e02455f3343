/** The parsers of chat-cli's flag values: each returns the value or throws OptionValueError with what is wrong. */
import { MAX_TIMER_SECONDS, timerMilliseconds, timerSecondsRange } from "../internal/deadline.js";
import { portNumber } from "../internal/port.js";
import { valueFlag } from "./define-command.js";

/** A flag value the option's parser refused; commander reports it as its own InvalidArgumentError. */
export class OptionValueError extends Error {
  override readonly name = "OptionValueError";
}

export function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 100) {
    throw new OptionValueError("must be a whole number from 1 to 100.");
  }
  return limit;
}

/** `--auth-timeout <seconds>`, in milliseconds. */
export function parseAuthTimeout(value: string): number {
  const ms = timerMilliseconds(value);
  if (ms === undefined) throw new OptionValueError(`must be ${timerSecondsRange()}.`);
  return ms;
}

const TOKEN_STORES = ["auto", "keychain", "file"] as const;

export function parseTokenStore(value: string): (typeof TOKEN_STORES)[number] {
  const store = TOKEN_STORES.find((name) => name === value);
  if (!store) throw new OptionValueError("must be auto, keychain or file.");
  return store;
}

export function parsePort(value: string): number {
  const port = portNumber(value, { allowZero: true });
  if (port === undefined) throw new OptionValueError("must be a port number from 0 to 65535.");
  return port;
}

export function parseMilliseconds(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > MAX_TIMER_SECONDS * 1000)
    throw new OptionValueError(
      `must be a whole number of milliseconds, at most ${MAX_TIMER_SECONDS * 1000} (a day).`,
    );
  return Number(value);
}

export function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1 || seconds > 86_400) {
    throw new OptionValueError("must be a whole number of seconds from 1 to 86400.");
  }
  return seconds;
}

export function parseMcpEra(value: string): "both" | "modern" | "legacy" {
  if (value !== "both" && value !== "modern" && value !== "legacy") {
    throw new OptionValueError("must be both, modern or legacy.");
  }
  return value;
}

export function parseDpopMode(value: string): "off" | "allowed" | "required" {
  if (value !== "off" && value !== "allowed" && value !== "required") {
    throw new OptionValueError("must be off, allowed or required.");
  }
  return value;
}

export function parseNames(value: string): string[] {
  const names = value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 0) throw new OptionValueError("give the integration names, comma-separated.");
  return names;
}

export function parseBaseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new OptionValueError("must be an http(s) URL, e.g. http://127.0.0.1:8787.");
  }
  return value.replace(/\/+$/, "");
}

/** `--limit <n>` of the commands that list. */
export const limitFlag = valueFlag("--limit <n>", "page size, 1-100 (default 20)", parseLimit);
