/** Running the bridge: input lines in, the relay, output lines out, and a clean shutdown on EOF or when closed. */

import type { Readable, Writable } from "node:stream";

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { configDir } from "../../config/index.js";
import { withinDeadline } from "../../internal/deadline.js";
import { checkConfigDir, UntrustedFolderError } from "../../internal/files.js";
import { describeProxyFor } from "../../internal/proxy.js";
import { answerHostWithError } from "../../internal/start-refusal.js";
import { EraRouter } from "../eras/era-router.js";
import { LegacyServerRelay } from "../eras/legacy-server-relay.js";
import { ModernServerRelay } from "../eras/modern-server-relay.js";
import { type BridgeLog, createBridgeLog, describeError, describeMessage } from "../log/log.js";
import type { LogFile } from "../log/log-file.js";
import type { ToClient } from "../messages/request-model.js";
import type { BridgeOptions } from "../options/bridge-options.js";
import { firstSignIn, lastToolsStore, SIGN_IN_WAIT_MS } from "../sign-in/first-sign-in.js";
import { bridgeLoginCommand, createBridgeAuth, refuseRestApiUrl } from "../sign-in/oauth.js";
import { SignInGate } from "../sign-in/sign-in-gate.js";
import type { SignInProcessCommand } from "../sign-in/sign-in-process.js";
import { oversizedLineAnswer, parseClientLine } from "../stdio/client-line.js";
import { LineSplitter } from "../stdio/line-splitter.js";
import { createLineWriter } from "../stdio/line-writer.js";
import { createToolPolicy } from "../steps/policy.js";
import { toolRulesWarnings } from "../steps/tool-rules-audit.js";
import { type BridgeAuth, createAuthorizedExchange } from "../upstream/http/authorized-exchange.js";
import { withRequestTimeout } from "../upstream/http/http-exchange.js";
import { DEFAULT_RECONNECT_WINDOW_MS } from "../upstream/http/time-outs.js";
import { LegacyUpstream } from "../upstream/legacy/legacy-upstream.js";
import { ModernUpstream } from "../upstream/modern.js";
import { type EraVerdict, eraVerdictStore, probeServerEra } from "../upstream/probe.js";
import { upstreamExchangeFor } from "../upstream/upstream-exchange.js";
import { ClientRequests } from "./client-requests.js";

/** How long a probing host's `server/discover` may wait on the server before the bridge answers it itself. */
const QUIET_PROBE_TIMEOUT_MS = 5000;
/** How long one exchange of a probe may take (answer and body). */
const PROBE_TIMEOUT_MS = 10_000;

const signedOut = () => new Error("not signed in (a server/discover from stdio never signs in)");

/** How long shutdown may wait for the remote session to end before exiting anyway. */
const SHUTDOWN_DEADLINE_MS = 1500;

/** The relay's streams and environment: the bin passes its own process's; a test passes paired streams. */
export interface RelayIO {
  /** JSON-RPC lines from the client; its end shuts the relay down. */
  stdin: Readable;
  stdout: Writable;
  /** The log's lines (default: the process's stderr). */
  stderr?: Writable;
  env: Record<string, string | undefined>;
  /** How to start a sign-in process (the bin passes itself), which outlives the relay; without it, in process. */
  signInProcess?: SignInProcessCommand;
  /** Every request of the relay, to the server and its authorization server, through this (tests: the reference server's). */
  fetch?: typeof globalThis.fetch;
}

export interface RelayHandle {
  /** Resolves with the exit code once the relay has shut down and written out everything queued for the client. */
  closed: Promise<number>;
  /** Resolves once the relay has written its first message to the client: it has started. */
  firstAnswer: Promise<void>;
  /** Shuts down (as the end of stdin does): the remote session is ended within the shutdown deadline. */
  close(reason: string): void;
}

/** Relays `io.stdin`/`io.stdout` to `options.url` until stdin ends or `close` is called; the caller ends the process. */
export async function runRelay(
  options: BridgeOptions,
  { stdin, stdout, stderr, env, signInProcess, fetch }: RelayIO,
): Promise<RelayHandle> {
  const untrusted = untrustedConfigDir(env);
  if (untrusted) return refuseStart(untrusted, { stdin, stdout, stderr });
  const log = await openBridgeLog(options, env, stderr);
  // Lines written in one event-loop turn go out in one write, in order.
  const writeLine = createLineWriter(stdout, (reason) => log.info(reason));
  // Every message to the client is logged here and only here; progress goes only to a request still waiting.
  const clientRequests = new ClientRequests(log);
  let answered: () => void = () => {};
  const firstAnswer = new Promise<void>((resolve) => {
    answered = resolve;
  });
  const writeToClient: ToClient = (message, raw) => {
    if (!clientRequests.toClient(message)) return;
    if (log.debugEnabled) log.debug(`server → client ${describeMessage(message)}`);
    writeLine(message, raw);
    answered();
  };

  /** Signed out, the sign-in gate answers the client itself and hides the relay's answers to what it answered. */
  let gate: SignInGate | undefined;
  const toClient: ToClient = (message, raw, related) =>
    gate ? gate.toClient(message, raw, related) : writeToClient(message, raw, related);

  /** Set by the first client message other than `server/discover`: from then on a refused token may sign in. */
  let signInAllowed = false;
  /** Set when the server first asked for authorization (a 401 or 403 on a request that may sign in). */
  let authorizationAsked = false;
  const userAuthorization = options.headers.some((header) => header.name.toLowerCase() === "authorization");
  const relay = await recordingFatal(log, async () => {
    const auth = userAuthorization
      ? undefined
      : await createBridgeAuth(
          options,
          log,
          env,
          "relay",
          (prompt) => gate?.showPrompt(prompt),
          signInProcess,
          fetch,
        );
    // Nothing signs in before the client sends something besides `server/discover` (a probing host's is quiet).
    const gatedAuth = (quiet: boolean): BridgeAuth | undefined =>
      auth && {
        accessToken: () => auth.accessToken(),
        proofSigner: () => auth.proofSigner(),
        recover: (challenge) => {
          if (quiet || !signInAllowed) return Promise.reject(signedOut());
          authorizationAsked = true;
          return auth.recover(challenge);
        },
      };
    const upstreamExchange = upstreamExchangeFor(options, fetch);
    const exchange = createAuthorizedExchange({
      auth: gatedAuth(false),
      headers: options.headers,
      log,
      exchange: upstreamExchange,
    });
    // Every probe is bounded: each of its exchanges with the server (a sign-in in between is not counted).
    const probeTimeoutMs = positiveNumber(env.CHAT_MCP_BRIDGE_PROBE_TIMEOUT_MS) ?? PROBE_TIMEOUT_MS;
    const probeExchange = (quiet: boolean) =>
      createAuthorizedExchange({
        auth: gatedAuth(quiet),
        headers: options.headers,
        log,
        exchange: withRequestTimeout(
          upstreamExchange,
          probeTimeoutMs,
          "the protocol probe (server/discover)",
        ),
      });
    // One policy for whichever relay the era picks; rules matching no listed tool are said once, at the first list.
    const onToolsListed = toolRulesWarnings(options, log, toClient);
    const policy = await createToolPolicy({
      ignoreTools: options.ignoreTools,
      readOnly: options.readOnly,
      confirmTools: options.confirmTools,
      log,
      ...(onToolsListed ? { onToolsListed } : {}),
    });
    const verdicts = eraVerdictStore(options, env);
    const reconnectWindow = positiveNumber(env.CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS);
    // Read once, now: the first message finds the remembered era already read (a file read, no side effect).
    let knownVerdict = verdicts.read();
    const modernUpstream = (
      use: "relay" | "probe" | "quiet probe",
      onNotification: (message: JSONRPCMessage) => void = toClient,
    ) =>
      new ModernUpstream({
        url: options.url,
        // A quiet probe uses the stored login only: it never opens a browser or takes the sign-in lock.
        exchange: use === "relay" ? exchange : probeExchange(use === "quiet probe"),
        log,
        onNotification,
        maxMessageBytes: options.maxMessageBytes,
        // Probes never wait for a server that is away (a network failure is no evidence of its era).
        ...(use === "relay" ? { reconnectWindowMs: reconnectWindow ?? DEFAULT_RECONNECT_WINDOW_MS } : {}),
      });
    const remember = (verdict: EraVerdict) => {
      knownVerdict = Promise.resolve(verdict);
      verdicts.write(verdict);
    };
    const router = new EraRouter({
      toClient,
      log,
      remembered: () => knownVerdict,
      remember,
      probe: () => probeServerEra(modernUpstream("probe")),
      probeQuietly: () =>
        withinDeadline(
          probeServerEra(modernUpstream("quiet probe")),
          QUIET_PROBE_TIMEOUT_MS,
          `no answer within ${QUIET_PROBE_TIMEOUT_MS} ms`,
        ),
      legacyRelay: async () => {
        const relay = new LegacyServerRelay({
          openUpstream: (toBridge) =>
            new LegacyUpstream({
              url: options.url,
              maxMessageBytes: options.maxMessageBytes,
              pingIntervalMs: options.pingIntervalMs,
              exchange,
              log,
              toClient: toBridge,
              reconnectWindowMs: reconnectWindow,
            }),
          toClient,
          log,
          policy,
        });
        await relay.start();
        return relay;
      },
      modernRelay: async (verdict) => {
        let relay: ModernServerRelay | undefined;
        const upstream = modernUpstream("relay", (message) =>
          relay ? relay.fromServer(message) : toClient(message),
        );
        upstream.protocolVersion = verdict.protocolVersion;
        relay = new ModernServerRelay({ upstream, discover: verdict.discover, toClient, log, policy });
        return relay;
      },
    });
    if (!auth) return router;
    gate = new SignInGate({
      relay: router,
      toClient: writeToClient,
      log,
      serverUrl: options.url.href,
      ...firstSignIn({
        auth,
        // The REST API asks for authorization as MCP does: refused as `login` refuses it, before any browser.
        refuseUrl: () => refuseRestApiUrl(options.url),
        knownVerdict: () => knownVerdict,
        probe: () => probeServerEra(modernUpstream("probe")),
        remember,
        authorizationAsked: () => authorizationAsked,
      }),
      lastTools: lastToolsStore(options, env),
      waitMs: positiveNumber(env.CHAT_MCP_BRIDGE_SIGN_IN_WAIT_MS) ?? SIGN_IN_WAIT_MS,
      loginCommand: bridgeLoginCommand(options),
    });
    return gate;
  });
  log.debug(`relaying stdio to ${options.url.href}`);
  if (log.debugEnabled)
    log.debug(`requests to ${options.url.origin} go ${describeProxyFor(options.url, env)}`);

  let shuttingDown = false;
  let closed: (code: number) => void = () => {};
  const closedPromise = new Promise<number>((resolve) => {
    closed = resolve;
  });
  const shutdown = (reason: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.debug(`shutting down: ${reason}`);
    let exited = false;
    const exit = () => {
      if (exited) return;
      exited = true;
      writeLine.flush();
      closed(0);
    };
    setTimeout(exit, SHUTDOWN_DEADLINE_MS + 300).unref();
    void relay.close(SHUTDOWN_DEADLINE_MS).finally(exit);
  };

  const clientLines: ConstructorParameters<typeof LineSplitter>[0] = {
    onLine: (line) => {
      const parsed = parseClientLine(line, options.maxMessageBytes);
      if ("error" in parsed) {
        log.info(`ignored a malformed line from the client (${parsed.error.error.message})`);
        writeLine(parsed.error);
      } else {
        if (!signInAllowed && (parsed.message as { method?: unknown }).method !== "server/discover")
          signInAllowed = true;
        // Every message from the client, whichever era's relay takes it, is logged here and only here.
        if (log.debugEnabled) log.debug(`client → server ${describeMessage(parsed.message)}`);
        clientRequests.fromClient(parsed.message);
        relay.fromClient(parsed.message);
      }
    },
    onOversizedLine: (bytes, fields) => {
      log.info(`a message of ${bytes} bytes from the client was not relayed (over --max-message-size)`);
      const answer = oversizedLineAnswer(bytes, fields, options.maxMessageBytes);
      if (answer) writeLine(answer);
    },
  };
  const splitter = new LineSplitter(clientLines, options.maxMessageBytes);
  stdin.on("data", (chunk: Buffer) => splitter.push(chunk));
  stdin.on("end", () => {
    splitter.end();
    shutdown("stdin closed");
  });
  stdin.on("error", (error) => shutdown(`stdin: ${describeError(error)}`));
  stdout.on("error", (error) => shutdown(`stdout: ${describeError(error)}`));
  return { closed: closedPromise, close: shutdown, firstAnswer };
}

/** Why the config dir may not be used (another user's, or one others can write), or undefined when it may. */
function untrustedConfigDir(env: Record<string, string | undefined>): string | undefined {
  try {
    checkConfigDir(configDir(env));
  } catch (error) {
    if (error instanceof UntrustedFolderError) return error.message;
    throw error;
  }
  return undefined;
}

/** A relay that may not start: says why on stderr, and to the host as its instructions and one tool, then ends. */
function refuseStart(
  message: string,
  { stdin, stdout, stderr = process.stderr }: Pick<RelayIO, "stdin" | "stdout" | "stderr">,
): RelayHandle {
  stderr.write(`chat-mcp-bridge: ${message}\n`);
  const answered = answerHostWithError(`chat-mcp-bridge: ${message}`, { stdin, stdout });
  return { closed: answered.then(() => 1), firstAnswer: answered, close: () => {} };
}

/** Runs `task`; an error it throws is recorded in the log file (the bin prints it on stderr) and thrown on. */
export async function recordingFatal<T>(log: BridgeLog, task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (error) {
    log.fatal?.(describeError(error));
    throw error;
  }
}

/** The log: stderr as `--debug`/`--silent` say, and the log file they ask for (one that cannot open is a warning). */
export async function openBridgeLog(
  options: BridgeOptions,
  env: Record<string, string | undefined> = process.env,
  stderr: Writable = process.stderr,
): Promise<BridgeLog> {
  let file: LogFile | undefined;
  if (options.debug || options.logFile) {
    const { bridgeLogFilePath, LogFile } = await import("../log/log-file.js");
    const path = bridgeLogFilePath(options, configDir(env));
    try {
      // The cap can be lowered for tests of the rotation; the default suits people.
      if (path)
        file = new LogFile(path, positiveNumber(env.CHAT_MCP_BRIDGE_LOG_MAX_BYTES), {
          profile: options.profile,
        });
    } catch (error) {
      if (!options.silent)
        stderr.write(`chat-mcp-bridge: cannot write the log file ${path}: ${describeError(error)}\n`);
    }
    if (file && !options.silent) stderr.write(`chat-mcp-bridge: logging to ${file.path}\n`);
  }
  const log = createBridgeLog({
    debug: options.debug,
    silent: options.silent,
    file,
    write: (line) => stderr.write(line),
  });
  file?.write("info", `started for ${options.url.origin}${options.url.pathname} (node ${process.version})`);
  return log;
}

export function positiveNumber(value: string | undefined): number | undefined {
  const number = Number(value);
  return value && Number.isFinite(number) && number > 0 ? number : undefined;
}
