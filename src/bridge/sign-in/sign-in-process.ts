/** A person's sign-in in its own detached process, so that it outlives a bridge its host stops: both ends of the pipes between them. */
import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";
import * as z from "zod";
import {
  AuthRequiredError,
  OAuthSession,
  type OAuthSessionOptions,
  type SignInPrompt,
  type SignInRequest,
} from "../../auth/index.js";
import { environmentWithoutSecrets, redact } from "../../internal/redact.js";
import { LineSplitter } from "../stdio/line-splitter.js";

/** Past the sign-in's own `--auth-timeout`: the longest the process may wait for another holder of the login lock. */
const LOCK_WAIT_MARGIN_MS = 65_000;

/** The session options that are no data (functions, keys, fetch): they stay in the bridge. */
const NOT_DATA = [
  "fetch",
  "log",
  "onSignInPrompt",
  "signInElsewhere",
  "env",
  "clientCredentials",
  "workloadIdentity",
  "enterpriseIdentity",
] as const;
/** The session options that cross to the sign-in process: data only. */
export type SignInProcessOptions = Omit<OAuthSessionOptions, (typeof NOT_DATA)[number]>;

/** The data of a session's options, as they cross to the sign-in process. */
export function signInProcessOptions(options: OAuthSessionOptions): SignInProcessOptions {
  const data: Partial<OAuthSessionOptions> = { ...options };
  for (const key of NOT_DATA) delete data[key];
  return data as SignInProcessOptions;
}

const RequestSchema = z.object({
  challengeScope: z.string().optional(),
  alreadyGranted: z.string().optional(),
  resourceMetadataUrl: z.string().optional(),
  rejectedToken: z.string().optional(),
});

const StartSchema = z.object({
  type: z.literal("start"),
  options: z.looseObject({ serverUrl: z.string(), authTimeoutMs: z.number().positive().optional() }),
  request: RequestSchema,
});

const ChildMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("prompt"),
    prompt: z.object({ url: z.string(), message: z.string(), browserOpened: z.boolean() }),
  }),
  z.object({ type: z.literal("log"), level: z.string(), message: z.string() }),
  z.object({ type: z.literal("done") }),
  z.object({ type: z.literal("failed"), message: z.string(), reason: z.string() }),
]);
type ChildMessage = z.infer<typeof ChildMessageSchema>;

/** How the bridge starts its sign-in process: its own bin, run again with the argument that makes it one (main.ts). */
export interface SignInProcessCommand {
  command: string;
  args: string[];
}

/** The most of a line read from the other end (the start's options are a few kilobytes, a message less). */
const MAX_LINE_BYTES = 1024 * 1024;

/**
 * The sign-in process is started through a launcher that starts it again and exits at once (a double fork): it is
 * then no descendant of the bridge (hosts that end a server walk its process tree by parent pid: Qwen Code), in a
 * session of its own (hosts that end the process group or session: setsid), and it holds only the bridge's pipes,
 * never the host's. It runs only Node's own modules, so it costs no bundle load.
 */
const LAUNCHER =
  'const [c,...a]=process.argv.slice(1);require("node:child_process").spawn(c,a,{detached:true,stdio:"inherit",windowsHide:true}).unref()';

/** Calls `onMessage` with each JSON line of `stream` (undefined for one that is not JSON; a longer one is skipped). */
function readJsonLines(stream: NodeJS.ReadableStream, onMessage: (message: unknown) => void): void {
  const lines = new LineSplitter(
    { onLine: (line) => onMessage(parseJson(line)), onOversizedLine: () => {} },
    MAX_LINE_BYTES,
  );
  stream.on("data", (chunk: Buffer | string) => lines.push(Buffer.from(chunk)));
}

const parseJson = (line: string): unknown => {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
};

/**
 * `signInElsewhere` for the bridge's session: a detached process runs the sign-in, its stderr (the URL, the
 * device code) shown on this one's while it runs, its messages read as JSON lines from its stdout. When this
 * process exits first (or its host ends it), the sign-in goes on to its end.
 */
export function signInInOwnProcess(
  command: SignInProcessCommand,
  options: SignInProcessOptions,
  parts: {
    env: Record<string, string | undefined>;
    stderr: NodeJS.WritableStream;
    log: (level: string, message: string) => void;
  },
): NonNullable<OAuthSessionOptions["signInElsewhere"]> {
  return (request, onPrompt) =>
    new Promise<void>((resolve, reject) => {
      // Secrets the bridge read from its environment cross on the pipe (in `options`), never in the child's environment.
      const env = environmentWithoutSecrets(parts.env as NodeJS.ProcessEnv);
      const child: ChildProcess = spawn(
        process.execPath,
        ["-e", LAUNCHER, command.command, ...command.args],
        {
          detached: true,
          stdio: ["pipe", "pipe", "pipe"],
          env,
          windowsHide: true,
        },
      );
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve();
      };
      child.stderr?.on("data", (chunk: Buffer) => parts.stderr.write(chunk));
      child.on("error", (error) =>
        settle(new AuthRequiredError(`Could not start the sign-in: ${error.message}`, "failed")),
      );
      // The launcher exits at once; the sign-in process holds the pipe until it ends.
      child.stdout?.on("close", () =>
        settle(
          new AuthRequiredError("The sign-in process ended without signing in; sign in again.", "failed"),
        ),
      );
      if (child.stdout)
        readJsonLines(child.stdout, (line) => {
          const parsed = ChildMessageSchema.safeParse(line);
          if (!parsed.success) return;
          const message: ChildMessage = parsed.data;
          if (message.type === "prompt") onPrompt(message.prompt);
          else if (message.type === "log") parts.log(message.level, message.message);
          else if (message.type === "done") settle();
          else settle(new AuthRequiredError(message.message, message.reason as AuthRequiredError["reason"]));
        });
      child.stdin?.on("error", () => {});
      child.stdin?.end(`${JSON.stringify({ type: "start", options, request })}\n`);
      // This process may exit while the sign-in goes on: nothing of the child keeps it alive.
      child.unref();
      for (const stream of [child.stdout, child.stderr]) (stream as Socket | null)?.unref();
    });
}

/**
 * The sign-in process itself (the bin with `SIGN_IN_PROCESS_ARG`): one sign-in, as the bridge asked on stdin,
 * then exit. Bounded: it exits at `--auth-timeout` plus the longest wait for the login lock, whatever happens.
 */
export async function runSignInProcess(): Promise<number> {
  // The bridge that started it may be gone, and its pipes with it: that ends nothing here.
  process.stdout.on("error", () => {});
  process.stderr.on("error", () => {});
  process.on("SIGHUP", () => {});
  let bridgeGone = false;
  const tell = (message: ChildMessage) =>
    new Promise<void>((done) => {
      if (bridgeGone) return done();
      process.stdout.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) bridgeGone = true;
        done();
      });
    });
  const start = await new Promise<unknown>((resolve) => {
    readJsonLines(process.stdin, resolve);
    process.stdin.once("end", () => resolve(undefined));
  });
  process.stdin.destroy();
  const parsed = StartSchema.safeParse(start);
  if (!parsed.success) return 2;
  const options = parsed.data.options as unknown as SignInProcessOptions;
  const authTimeoutMs = parsed.data.options.authTimeoutMs ?? 300_000;
  setTimeout(() => process.exit(1), authTimeoutMs + LOCK_WAIT_MARGIN_MS).unref();
  const session = new OAuthSession({
    ...options,
    env: process.env,
    answerAtOnceWhenWaiting: true,
    onSignInPrompt: (prompt: SignInPrompt) => void tell({ type: "prompt", prompt }),
    log: (level, message) => void tell({ type: "log", level, message: redact(message) }),
  });
  try {
    await session.signInFor(parsed.data.request as SignInRequest);
    await tell({ type: "done" });
    return 0;
  } catch (error) {
    const reason = error instanceof AuthRequiredError ? error.reason : "failed";
    await tell({
      type: "failed",
      message: redact(error instanceof Error ? error.message : String(error)),
      reason,
    });
    return 1;
  }
}
