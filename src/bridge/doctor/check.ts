/** The one check type every doctor check implements, and what the checks hand each other while the runner runs them. */

import type { DiscoveredServer } from "../../auth/discovery.js";
import type { OAuthSession } from "../../auth/session/index.js";
import type { ProxyChoice } from "../../internal/proxy.js";
import type { DoctorCommandOptions, DoctorTarget } from "../options/bridge-options.js";
import { fetchExchange } from "../upstream/http/fetch-exchange.js";
import type { HttpExchange } from "../upstream/http/http-exchange.js";
import { nodeHttpExchange } from "../upstream/http/node-http-exchange.js";
import type { EraVerdict } from "../upstream/probe.js";

/** A check's outcome as the report shows it (the `--json` shape: `pass`, `fail` or `skip`). */
export type CheckStatus = "pass" | "fail" | "skip";

/** One line of the report. */
export interface DoctorCheck {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

/** What a check's run found: its status and words; the title is the check's own unless it names a better one. */
export interface CheckResult {
  status: CheckStatus;
  detail: string;
  fix?: string;
  /** A title for this run (the live check names the exchange the server's era calls for). */
  title?: string;
}

/** The bridge's options, plus `--json` and `--sign-in`. */
export type DoctorOptions = DoctorCommandOptions;

/** How the endpoint answered a request without a token. */
export interface EndpointAnswer {
  status: number;
  failed: boolean;
  resourceMetadataUrl?: string;
}

/** What earlier checks found, for the checks after them; each field is set by the check named beside it. */
export interface Findings {
  /** url */
  url?: URL;
  /** proxy: undefined when direct. */
  proxy?: ProxyChoice;
  /** endpoint */
  endpoint?: EndpointAnswer;
  /** endpoint: the server asks for sign-in and no `--header Authorization` stands in for it. */
  needsAuth?: boolean;
  /** authorization-server */
  authorizationServer?: DiscoveredServer;
  /** era */
  verdict?: EraVerdict;
  /** live: the `tools/list` result. */
  listed?: unknown;
}

/** Everything a check may use: the command, the findings so far, and its deadline's signal. */
export interface DoctorContext {
  target: DoctorTarget;
  options: DoctorOptions;
  env: Record<string, string | undefined>;
  found: Findings;
  /** The OAuth session for this URL and profile (made once, on first use). */
  session(): Promise<OAuthSession>;
  /** The status each check ended with so far, by id. */
  statusOf(id: string): CheckStatus | undefined;
  /**
   * The network, when it is not this machine's: every request goes through this fetch (a test's in-process server),
   * and the checks that would open connections of their own (DNS, TCP, TLS) say they did not.
   */
  fetch?: typeof globalThis.fetch;
}

/** The HTTP exchange doctor's own requests go through: the given network's, else node:http's. */
export function doctorExchange(context: DoctorContext): HttpExchange {
  return context.fetch ? fetchExchange(context.fetch) : nodeHttpExchange;
}

/** A check another one needs, and what the dependent says when that one failed. */
export interface Need {
  id: string;
  /** The reason shown (as "not checked (reason)") when the needed check failed. */
  whenFailed: string;
}

/** One doctor check: what it needs from earlier checks, how long it may take, and what it finds. */
export interface Check {
  id: string;
  title: string;
  /**
   * Checks that must have run without failing. A need that failed skips this check with the need's `whenFailed`;
   * a need the runner skipped passes its own reason on.
   */
  needs: Need[];
  /** A reason to skip that depends on what earlier checks found (not on their status); undefined to run. */
  skipWhen?(context: DoctorContext): string | undefined;
  /** False leaves the check out of the report altogether (a check for an option that was not given). */
  appliesTo?(context: DoctorContext): boolean;
  /** The most its run may take; past it the check fails with the deadline named. */
  deadlineMs(context: DoctorContext): number;
  /** Runs the check; `signal` is aborted when the deadline passes. A throw is reported as a failure. */
  run(context: DoctorContext, signal: AbortSignal): Promise<CheckResult>;
}

/** The URL the url check accepted: every check after it needs that check, so it is set when they run. */
export function checkedUrl(context: DoctorContext): URL {
  const url = context.found.url;
  if (!url) throw new Error("doctor: a check ran before the URL check passed");
  return url;
}

/** A message whose last sentence says what to do, as the network failures' messages are: detail and fix. */
export function asDetailAndFix(message: string, fallbackFix: string): { detail: string; fix: string } {
  const sentences = message.trim().split(/(?<=\.)\s+(?=[A-Z])/);
  if (sentences.length < 2) return { detail: message.trim(), fix: fallbackFix };
  return { detail: sentences.slice(0, -1).join(" "), fix: sentences.at(-1)! };
}

/** The command that signs in again for this URL and profile. */
export function loginCommand(url: URL, options: DoctorOptions): string {
  const profile = options.profile && options.profile !== "default" ? ` --profile ${options.profile}` : "";
  // The store doctor read: a login kept in another one is a login doctor would not find.
  const store = options.tokenStore !== "auto" ? ` --token-store ${options.tokenStore}` : "";
  return `chat-mcp-bridge login${profile}${store} ${url.href}`;
}

/** How long a browser sign-in may take (`--auth-timeout`), for the checks that may start one under `--sign-in`. */
export function signInAllowanceMs(options: DoctorOptions): number {
  return options.signIn ? (options.authTimeoutMs ?? 300_000) : 0;
}

/** The request's own signal bounded by the check's deadline. */
export function boundedSignal(signal: AbortSignal, own: AbortSignal | undefined): AbortSignal {
  return own ? AbortSignal.any([own, signal]) : signal;
}
