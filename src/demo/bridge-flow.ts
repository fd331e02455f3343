/** Part A of the demo: the integration flow through chat-mcp-bridge, spawned over stdio by an MCP SDK client. */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type * as z from "zod";
import { localBridgeNote } from "../cli/commands/serve.js";
import {
  ChatSchema,
  type Message,
  MessageListSchema,
  MessageSchema,
  type PendingTask,
  PreviewSchema,
  pendingTaskOf,
  type Task,
} from "../wire/index.js";
import { elideQueries, type Narrator, type StepVoice, showJson } from "./narrator.js";
import type { DemoSetup } from "./setup.js";

export interface BridgeFlowResult {
  chatUrl: string;
  previewUrl: string;
}

const DEMO_CLIENT = { name: "chat-mcp-bridge-demo", version: "1.0.0" };

export async function runBridgeFlow(setup: DemoSetup, narrator: Narrator): Promise<BridgeFlowResult> {
  const { style } = narrator;
  const bridgeArgs = ["--token-store", "file", "--auth-timeout", String(setup.signInTimeoutMs / 1000)];
  narrator.heading("A. Through chat-mcp-bridge, spawned over stdio by an MCP SDK client");
  narrator.note(
    "The MCP client starts the bridge as a client config would, and talks JSON-RPC over its stdin/stdout:",
  );
  narrator.line(`     ${style.bold(`$ chat-mcp-bridge ${bridgeArgs.join(" ")} ${setup.server.mcpUrl}`)}`);
  narrator.note(
    `(a client config runs the same: {"command":"npx","args":["-y","chat-mcp-bridge","<mcp-url>"]})`,
  );
  for (const line of localBridgeNote(setup.bins.bridge)) narrator.note(line.trim());

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [setup.bins.bridge, ...bridgeArgs, setup.server.mcpUrl],
    env: setup.childEnv,
    stderr: "pipe",
  });
  // The bridge talks to people on stderr (sign-in prompts, warnings): show it, marked as the bridge's. Headless,
  // nobody needs the sign-in URL's query (state, PKCE challenge); a person may need all of it if no browser opens.
  const shown = setup.mode.kind === "headless" ? elideQueries : (row: string) => row;
  transport.stderr?.on("data", (chunk: Buffer) => {
    for (const row of chunk.toString("utf8").split("\n")) {
      if (row.trim()) narrator.line(`       ${style.dim(`bridge │ ${shown(row)}`)}`);
    }
  });
  const client = new Client(DEMO_CLIENT);
  const callTool = toolCaller(client);

  try {
    await narrator.step("A1", "Sign in and connect", async (say) => {
      say.sent("initialize");
      if (setup.mode.kind === "browser") {
        say.note(
          "The bridge gets 401 from /mcp, finds the authorization server and opens the sign-in page in your browser.\n" +
            `In the browser: sign in as ${style.bold("dev")} / ${style.bold("dev")}, keep ${style.bold("Personal account")} ` +
            `or choose ${style.bold("Team Acme")}, then ${style.bold("Approve")}.\n` +
            "(Team Studio has no hosting project, so the flow would stop at step A5; Secure Corp asks for SSO first.)",
        );
      } else {
        say.note(
          "The bridge gets 401 from /mcp, discovers the authorization server, registers (RFC 7591), and opens the\n" +
            "sign-in URL with PKCE; the demo's headless opener follows it and the server approves for team acme.",
        );
      }
      await client.connect(transport, { timeout: setup.signInTimeoutMs + 10_000 });
      const server = client.getServerVersion();
      say.received(`signed in; connected to ${server?.name ?? "the server"} ${server?.version ?? ""}`.trim());
    });

    await narrator.step("A2", "List the tools (tools/list)", async (say) => {
      say.sent("tools/list");
      const { tools } = await client.listTools();
      say.received(`${tools.length} tools: ${tools.map((tool) => tool.name).join(", ")}`);
      if (!tools.some((tool) => tool.name === "resolve_task"))
        throw new Error("the server has no resolve_task tool");
    });

    const chat = await narrator.step(
      "A3",
      "Create a chat with a prompt that needs a database",
      async (say) => {
        const created = await callTool(say, "create_chat", { message: setup.prompt }, ChatSchema);
        say.received(`chat ${created.id} "${created.title}"\nurl ${created.url}`);
        return created;
      },
    );

    const integration = await narrator.step(
      "A4",
      "Read the integration request from the latest assistant message",
      async (say) => {
        const pending = await readPending(say, callTool, chat.id);
        if (pending?.kind !== "integration") throw unexpectedPause("an integration request", pending);
        const part = pending.message.parts.find((p) => p.type === "agent-action");
        say.received(
          `finishReason "${pending.message.finishReason}", agent-action part:\n${showJson(part)}\n` +
            `requestedIntegrations ${showJson(pending.integrations)}, requestedMcpPresets ${showJson(pending.mcpPresets)}`,
        );
        return pending;
      },
    );

    await narrator.step("A5", "Read hostProjectId from the chat", async (say) => {
      const fresh = await callTool(say, "get_chat", { chatId: chat.id }, ChatSchema);
      if (!fresh.hostProjectId) {
        throw new Error(
          `chat ${chat.id} has no hostProjectId: its account or team has no hosting project, so the flow stops here` +
            (setup.mode.kind === "browser"
              ? " (run the demo again and choose Acme or Personal when signing in)"
              : ""),
        );
      }
      say.received(
        `hostProjectId ${fresh.hostProjectId}  ${style.dim(`(projectId ${fresh.projectId} is not used)`)}`,
      );
      say.note(
        `Here a real caller connects ${integration.integrations.join(", ")} to ${fresh.hostProjectId} on the hosting platform.`,
      );
    });

    await narrator.step(
      "A6",
      "Confirm the connected integrations (resolve_task confirmed-steps)",
      async (say) => {
        const task: Task = { type: "confirmed-steps", connectedIntegrationNames: integration.integrations };
        const reply = await callTool(say, "resolve_task", { chatId: chat.id, task }, MessageSchema);
        say.received(describeReply(reply));
      },
    );

    const permissions = await narrator.step(
      "A7",
      "The permission pause: read the latest assistant message again",
      async (say) => {
        const pending = await readPending(say, callTool, chat.id);
        if (pending?.kind !== "permissions") throw unexpectedPause("a permission request", pending);
        say.received(`suggestedPermissions:\n${showJson(pending.permissions)}`);
        return pending;
      },
    );

    await narrator.step(
      "A8",
      "Approve the script (resolve_task confirmed-permissions, unchanged)",
      async (say) => {
        const task: Task = { type: "confirmed-permissions", permissions: permissions.permissions };
        const reply = await callTool(say, "resolve_task", { chatId: chat.id, task }, MessageSchema);
        if (reply.finishReason !== "stop")
          throw new Error(`expected a final reply, got ${describeReply(reply)}`);
        say.received(describeReply(reply));
      },
    );

    const preview = await narrator.step("A9", "Get the preview URL (get_preview)", async (say) => {
      const result = await callTool(say, "get_preview", { chatId: chat.id }, PreviewSchema);
      say.received(result.url);
      return result;
    });

    return { chatUrl: chat.url ?? "", previewUrl: preview.url };
  } finally {
    await client.close().catch(() => {});
  }
}

type ToolCaller = <S extends z.ZodType>(
  say: StepVoice,
  name: string,
  args: Record<string, unknown>,
  schema: S,
) => Promise<z.infer<S>>;

/** Calls a tool, narrating the arguments; an `isError` result or an off-shape structuredContent fails the step. */
function toolCaller(client: Client): ToolCaller {
  return async (say, name, args, schema) => {
    say.sent(`${name} ${showJson(args)}`);
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) {
      const text = Array.isArray(result.content)
        ? result.content.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join(" ")
        : "";
      throw new Error(`${name} answered with an error: ${text}`);
    }
    const parsed = schema.safeParse(result.structuredContent);
    if (!parsed.success) throw new Error(`${name} returned structuredContent of an unexpected shape`);
    return parsed.data;
  };
}

/** Only the latest assistant message counts (list_messages is newest first). */
async function readPending(
  say: StepVoice,
  callTool: ToolCaller,
  chatId: string,
): Promise<PendingTask | null> {
  const page = await callTool(say, "list_messages", { chatId, limit: 5 }, MessageListSchema);
  const latest = page.data.find((message) => message.role === "assistant");
  if (!latest) throw new Error(`chat ${chatId} has no assistant message yet`);
  say.received(`latest assistant message ${latest.id}: "${firstLine(latest.content ?? "")}"`);
  return pendingTaskOf(latest);
}

function unexpectedPause(expected: string, pending: PendingTask | null): Error {
  const found = pending ? `a ${pending.kind} pause` : "no pause (the assistant did not ask for anything)";
  return new Error(`expected ${expected}, found ${found}`);
}

function describeReply(reply: Message): string {
  const pending = pendingTaskOf(reply);
  const what =
    pending?.kind === "permissions"
      ? `paused again: permission to run ${pending.permissions.map((p) => p.input.executeScript ?? p.toolName).join(", ")}`
      : pending?.kind === "integration"
        ? `paused again: integrations ${pending.integrations.join(", ")}`
        : `finishReason "${reply.finishReason}"`;
  return `${what}\n"${firstLine(reply.content ?? "")}"`;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 140 ? `${line.slice(0, 137)}...` : line;
}
