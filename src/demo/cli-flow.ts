/** Part B of the demo: the same flow through chat-cli commands, each printed so the reader can run it again. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ChatClient } from "../client/index.js";
import { ChatSchema } from "../wire/index.js";
import type { Narrator, StepVoice } from "./narrator.js";
import { type DemoSetup, HEADLESS_TEAM } from "./setup.js";

export interface CliFlowResult {
  chatUrl: string;
  previewUrl: string;
}

/** The team whose dev API key the commands use (any seeded team with a hosting project would do). */
const CLI_TEAM = HEADLESS_TEAM;
const COMMAND_TIMEOUT_MS = 30_000;

interface CommandOutput {
  stdout: string;
  stderr: string;
}

export async function runCliFlow(setup: DemoSetup, narrator: Narrator): Promise<CliFlowResult> {
  const apiKey = setup.server.apiKeys[CLI_TEAM];
  if (!apiKey) throw new Error(`the reference server has no dev API key for ${CLI_TEAM}`);
  const env = { ...setup.childEnv, CHAT_API_URL: setup.server.url, CHAT_API_KEY: apiKey };

  narrator.heading("B. Through chat-cli commands");
  narrator.note(
    "To repeat these commands against this server while the demo runs, or against `chat-cli serve`:",
  );
  narrator.line(`     ${narrator.style.bold(`$ export CHAT_API_URL=${setup.server.url}`)}`);
  narrator.line(
    `     ${narrator.style.bold("$ export CHAT_API_KEY=<dev API key>")}  ${narrator.style.dim(
      `(the ${CLI_TEAM} team's key; \`chat-cli serve\` prints one; not shown here)`,
    )}`,
  );

  const run = (say: StepVoice, args: string[], show: "all" | "stderr" = "all") =>
    runChatCli(setup.bins.cli, args, env, say, show);

  const chat = await narrator.step("B1", "Create a chat with the same prompt", async (say) => {
    const { stdout } = await run(say, ["create", setup.prompt, "--json"], "stderr");
    const parsed = ChatSchema.safeParse(JSON.parse(stdout));
    if (!parsed.success) throw new Error("`chat-cli create --json` printed something that is not a chat");
    say.received(
      `chat ${parsed.data.id}, hostProjectId ${parsed.data.hostProjectId ?? "(none)"}\nurl ${parsed.data.url}`,
    );
    say.note("(--json prints the chat exactly as the API returns it; the demo reads its id from there)");
    return parsed.data;
  });

  await narrator.step("B2", "See what the chat waits for", (say) => run(say, ["pending", chat.id]));
  await narrator.step("B3", "Confirm the requested integrations as connected", (say) =>
    run(say, ["resolve", chat.id, "--connected"]),
  );
  await narrator.step("B4", "See the permission pause", (say) => run(say, ["pending", chat.id]));
  await narrator.step("B5", "Approve the pending permissions, unchanged", (say) =>
    run(say, ["resolve", chat.id, "--approve"]),
  );

  const previewUrl = await narrator.step("B6", "Get the preview URL", async (say) => {
    const { stdout } = await run(say, ["preview", chat.id]);
    // The commands' exit codes say each was accepted; check the end state through the SDK too.
    const pending = await new ChatClient({ baseUrl: setup.server.url, token: apiKey }).getPendingTask(
      chat.id,
    );
    if (pending) throw new Error(`the chat still waits for ${pending.kind} after the flow`);
    const url = stdout.match(/https?:\/\/\S+/)?.[0];
    if (!url) throw new Error("`chat-cli preview` printed no URL");
    return url;
  });

  return { chatUrl: chat.url ?? "", previewUrl };
}

/** Runs `chat-cli <args>`, narrating the command line and its output; a non-zero exit fails the step. */
async function runChatCli(
  cliBin: string,
  args: string[],
  env: Record<string, string>,
  say: StepVoice,
  show: "all" | "stderr",
): Promise<CommandOutput> {
  say.command(["chat-cli", ...args].map(shellWord).join(" "));
  const narrate = ({ stdout, stderr }: CommandOutput) => {
    if (show === "all" && stdout.trim()) say.output(stdout);
    if (stderr.trim()) say.output(stderr, "stderr");
  };
  try {
    const output = await promisify(execFile)(process.execPath, [cliBin, ...args], {
      env,
      timeout: COMMAND_TIMEOUT_MS,
    });
    narrate(output);
    return output;
  } catch (error) {
    const failed = error as Partial<CommandOutput> & { code?: unknown; signal?: string; killed?: boolean };
    narrate({ stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" });
    if (failed.killed)
      throw new Error(`chat-cli ${args[0]} did not finish within ${COMMAND_TIMEOUT_MS / 1000} s`);
    if (typeof failed.code !== "number" && !failed.signal) throw error;
    throw new Error(`chat-cli ${args[0]} exited with ${failed.signal ?? `code ${failed.code}`}`);
  }
}

/** Quotes a word for a POSIX shell when it needs it, so the printed line can be pasted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
