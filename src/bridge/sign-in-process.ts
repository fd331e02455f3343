/** A person's sign-in in its own detached process, so that it outlives a bridge a one-shot host stops: both ends of its IPC channel. */
import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";
import * as z from "zod";
import {
  AuthRequiredError,
  OAuthSession,
  type OAuthSessionOptions,
  type SignInPrompt,
  type SignInRequest,
} from "../auth/index.js";
import { environmentWithoutSecrets, redact } from "../internal/redact.js";

/** Past the sign-in's own `--auth-timeout`: the longest the process may wait for another holder of the login lock. */
const LOCK_WAIT_MARGIN_MS = 65_000;

/** The session options that cross to the sign-in process: data only (no functions, keys or fetch). */
export type SignInProcessOptions = Omit<
  OAuthSessionOptions,
  | "fetch"
  | "log"
  | "onSignInPrompt"
  | "signInElsewhere"
  | "env"
  | "clientCredentials"
  | "workloadIdentity"
  | "enterpriseIdentity"
>;

/** The data of a session's options, as they cross to the sign-in process. */
export function signInProcessOptions(options: OAuthSessionOptions): SignInProcessOptions {
  const {
    fetch: _fetch,
    log: _log,
    onSignInPrompt: _prompt,
    signInElsewhere: _elsewhere,
    env: _env,
    clientCredentials: _credentials,
    workloadIdentity: _workload,
    enterpriseIdentity: _enterprise,
    ...data
  } = options;
  return data;
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

/**
 * `signInElsewhere` for the bridge's session: a detached process runs the sign-in, its stderr (the URL, the
 * device code) shown on this one's while it runs. When this process exits first, the sign-in goes on to its end.
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
      // Secrets the bridge read from its environment cross over IPC (in `options`), never in the child's environment.
      const env = environmentWithoutSecrets(parts.env as NodeJS.ProcessEnv);
      const child: ChildProcess = spawn(command.command, command.args, {
        detached: true,
        stdio: ["ignore", "ignore", "pipe", "ipc"],
        env,
        windowsHide: true,
      });
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
      child.on("exit", (code, signal) =>
        settle(
          new AuthRequiredError(
            `The sign-in process ended without signing in (${signal ?? `exit code ${code}`}); sign in again.`,
            "failed",
          ),
        ),
      );
      child.on("message", (raw: unknown) => {
        const parsed = ChildMessageSchema.safeParse(raw);
        if (!parsed.success) return;
        const message: ChildMessage = parsed.data;
        if (message.type === "prompt") onPrompt(message.prompt);
        else if (message.type === "log") parts.log(message.level, message.message);
        else if (message.type === "done") settle();
        else settle(new AuthRequiredError(message.message, message.reason as AuthRequiredError["reason"]));
      });
      // This process may exit while the sign-in goes on: nothing of the child keeps it alive.
      child.unref();
      (child.stderr as Socket | null)?.unref();
      child.channel?.unref();
      child.send({ type: "start", options, request });
    });
}

/**
 * The sign-in process itself (the bin with `SIGN_IN_PROCESS_ARG`): one sign-in, as the bridge asked over IPC,
 * then exit. Bounded: it exits at `--auth-timeout` plus the longest wait for the login lock, whatever happens.
 */
export async function runSignInProcess(): Promise<number> {
  // The bridge that started it may be gone: its stderr pipe with it, and the channel.
  process.stderr.on("error", () => {});
  const tell = (message: ChildMessage) =>
    new Promise<void>((done) => {
      if (!process.connected || !process.send) return done();
      try {
        process.send(message, () => done());
      } catch {
        done();
      }
    });
  const start = await new Promise<unknown>((resolve) => {
    process.once("message", resolve);
    process.once("disconnect", () => resolve(undefined));
  });
  const parsed = StartSchema.safeParse(start);
  if (!parsed.success) return 2;
  const options = parsed.data.options as unknown as SignInProcessOptions;
  const authTimeoutMs = parsed.data.options.authTimeoutMs ?? 300_000;
  setTimeout(() => process.exit(1), authTimeoutMs + LOCK_WAIT_MARGIN_MS).unref();
  // The channel is for telling: once the bridge is gone the sign-in goes on, so it does not hold the process.
  process.channel?.unref();
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
