/** The seven chat tools of the reference server, backed by the same ChatService as `/v2`; failures become `isError` results that say what to do next. */

import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import {
  type AuthInfo,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
  isInputRequiredResult,
  type McpServer,
  type RegisteredTool,
  type ServerContext,
  type StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import {
  ChatListSchema,
  ChatSchema,
  confirmedStepsFor,
  type Message,
  MessageListSchema,
  MessageSchema,
  PreviewSchema,
  pendingTaskOf,
  TaskSchema,
  TOOL_INPUTS,
  type ToolName,
} from "../../wire/index.js";
import {
  type AssistantWatch,
  type ChatService,
  type OnAssistantProgress,
  type Principal,
  ServiceError,
  type SsoGate,
} from "../context.js";
import { PREVIEW_APP_URI } from "./preview-app.js";
import type { ClaimedState, RequestStates } from "./request-state.js";
import { type ResolveState, resolveThroughElicitation } from "./resolve-elicitation.js";

export interface ChatToolsContext {
  service: ChatService;
  sso: SsoGate;
  /** The `requestState`s of the question `resolve_task` without `task` asks the person. */
  states: RequestStates<ResolveState>;
}

/** `x-mcp-header` name of every `chatId` argument: clients mirror it as `Mcp-Param-ChatId` (a balancer can route by chat). */
export const CHAT_ID_HEADER = "ChatId";

/** `chatId` annotated for `Mcp-Param-ChatId`; the SDK's modern entry checks the header equals the argument. */
const chatIdArgument = TOOL_INPUTS.get_chat.chatId.meta({ "x-mcp-header": CHAT_ID_HEADER });

/**
 * A schema whose JSON Schema has no `$schema` key: zod names its dialect on every conversion, and some host libraries'
 * validators (Genkit's) refuse a tool whose input schema carries one; MCP's default dialect is 2020-12 anyway.
 */
function withoutDialect<S extends StandardSchemaWithJSON>(schema: S): S {
  const standard = schema["~standard"];
  type Convert = typeof standard.jsonSchema.input;
  const strip =
    (convert: Convert): Convert =>
    (options) => {
      const { $schema: _dialect, ...rest } = convert(options);
      return rest;
    };
  const jsonSchema = { input: strip(standard.jsonSchema.input), output: strip(standard.jsonSchema.output) };
  return { "~standard": { ...standard, validate: standard.validate, jsonSchema } } as unknown as S;
}

/** The input schemas as served: the wire shapes, `chatId` annotated, `resolve_task.task` optional (then it asks). */
const CHAT_TOOL_INPUTS = {
  create_chat: z.object(TOOL_INPUTS.create_chat),
  list_chats: z.object(TOOL_INPUTS.list_chats),
  get_chat: z.object({ ...TOOL_INPUTS.get_chat, chatId: chatIdArgument }),
  list_messages: z.object({ ...TOOL_INPUTS.list_messages, chatId: chatIdArgument }),
  send_message: z.object({ ...TOOL_INPUTS.send_message, chatId: chatIdArgument }),
  resolve_task: z.object({
    chatId: chatIdArgument,
    task: TaskSchema.optional().describe(
      `${TOOL_INPUTS.resolve_task.task.description ?? ""}. Leave it out to ask the user through the client's ` +
        "elicitation dialog instead.",
    ),
  }),
  get_preview: z.object({ ...TOOL_INPUTS.get_preview, chatId: chatIdArgument }),
};
export const TOOL_INPUT_SCHEMAS = Object.fromEntries(
  Object.entries(CHAT_TOOL_INPUTS).map(([name, schema]) => [name, withoutDialect(schema)]),
) as typeof CHAT_TOOL_INPUTS;

type Access = "chat:read" | "chat:write";

/** The scope each tool needs: `chat:read` for tools that read, `chat:write` for tools that write. */
export const TOOL_SCOPES: Record<ToolName, Access> = {
  create_chat: "chat:write",
  list_chats: "chat:read",
  get_chat: "chat:read",
  list_messages: "chat:read",
  send_message: "chat:write",
  resolve_task: "chat:write",
  get_preview: "chat:read",
};

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITES = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

export const SERVER_INSTRUCTIONS =
  "Chats with an AI assistant. A chat can pause: its latest assistant message then has finishReason " +
  '"tool-calls" and asks either for integrations or MCP presets (an agent-action part) or for permission to run a script ' +
  "(a tool-call part with suggestedPermissions). Ask the user, then call resolve_task with what they approved.";

/** The principal the `/mcp` route attached to the request's auth info. */
export function principalOf(authInfo: AuthInfo | undefined): Principal | null {
  const principal = authInfo?.extra?.principal;
  return principal && typeof principal === "object" ? (principal as Principal) : null;
}

/** The chat tools as registered on one McpServer, by name (to withdraw and restore them). */
export type ChatTools = Record<ToolName, RegisteredTool>;

/** The tools that write (`chat:write`): withdrawn from `/mcp` while the server is read-only. */
export const WRITE_TOOLS = (Object.keys(TOOL_SCOPES) as ToolName[]).filter(
  (name) => TOOL_SCOPES[name] === "chat:write",
);

/**
 * Lists and serves the write tools, or withdraws them (read-only). On a connected server (a 2025 session) a change
 * sends `notifications/tools/list_changed`; one that does not change the list sends nothing.
 */
export function setWriteToolsEnabled(tools: ChatTools, enabled: boolean): void {
  for (const name of WRITE_TOOLS) {
    if (tools[name].enabled === enabled) continue;
    if (enabled) tools[name].enable();
    else tools[name].disable();
  }
}

export function registerChatTools(server: McpServer, toolsCtx: ChatToolsContext): ChatTools {
  const { service } = toolsCtx;
  const tools = {} as ChatTools;

  /**
   * Runs one tool call: auth, scope, SSO, the request's `requestState` (refused unless issued for this very call, and
   * spent by it), then the service; the result as structured content plus its JSON.
   */
  function run<T extends object>(
    tool: ToolName,
    args: object,
    ctx: ServerContext,
    call: (
      principal: Principal,
      state: ClaimedState<ResolveState> | undefined,
    ) => Promise<T | InputRequiredResult>,
    hint?: (result: T) => string | null,
  ): Promise<CallToolResult | InputRequiredResult> {
    return (async () => {
      const access = TOOL_SCOPES[tool];
      const principal = principalOf(ctx.http?.authInfo);
      if (!principal) return failure("Not signed in: reconnect the MCP server to sign in again.");
      if (!principal.scopes.includes(access)) {
        return failure(
          `This connection was authorized without the ${access} scope. Reconnect the MCP server and approve ${access}.`,
        );
      }
      try {
        toolsCtx.sso.assertVerified(principal);
        const state = toolsCtx.states.claim({ tool, args }, ctx);
        const result = await call(principal, state);
        if (isInputRequiredResult(result)) return result;
        const content: CallToolResult["content"] = [{ type: "text", text: JSON.stringify(result) }];
        const next = hint?.(result);
        if (next) content.push({ type: "text", text: next });
        return { content, structuredContent: result as Record<string, unknown> };
      } catch (error) {
        // Cancelled: the SDK sends no answer to a cancelled request, and nothing failed worth a log line.
        if (ctx.mcpReq.signal.aborted) return failure("Cancelled: nothing was written.");
        return failure(explain(error));
      }
    })();
  }

  tools.create_chat = server.registerTool(
    "create_chat",
    {
      title: "Create chat",
      description:
        "Create a chat from a prompt. The assistant answers the first message at once; the result is the chat " +
        "(with its url). Read the assistant's reply with list_messages.",
      inputSchema: TOOL_INPUT_SCHEMAS.create_chat,
      outputSchema: ChatSchema,
      annotations: WRITES,
    },
    (args, ctx) =>
      run(
        "create_chat",
        args,
        ctx,
        (p) => service.createChat(p, args, watchOf(ctx)),
        (chat) =>
          `Chat ${chat.id} created. Call list_messages with chatId "${chat.id}" to read the assistant's reply.`,
      ),
  );

  tools.list_chats = server.registerTool(
    "list_chats",
    {
      title: "List chats",
      description:
        "List chats of the connected account or team, newest-updated first. `topic` keeps chats whose title " +
        "or messages mention it. Pass nextCursor as `cursor` for the next page.",
      inputSchema: TOOL_INPUT_SCHEMAS.list_chats,
      outputSchema: ChatListSchema,
      annotations: READ_ONLY,
    },
    (args, ctx) => run("list_chats", args, ctx, (p) => service.listChats(p, args)),
  );

  tools.get_chat = server.registerTool(
    "get_chat",
    {
      title: "Get chat",
      description:
        "Details of a chat: title, timestamps, url (opens the chat for the connected account or team) and " +
        "hostProjectId (the linked hosting project; absent when none is linked).",
      inputSchema: TOOL_INPUT_SCHEMAS.get_chat,
      outputSchema: ChatSchema,
      annotations: READ_ONLY,
    },
    (args, ctx) => run("get_chat", args, ctx, (p) => service.getChat(p, args.chatId)),
  );

  tools.list_messages = server.registerTool(
    "list_messages",
    {
      title: "List messages",
      description:
        'Messages of a chat, newest first. If the newest assistant message has finishReason "tool-calls", the ' +
        "chat waits for resolve_task (see its parts).",
      inputSchema: TOOL_INPUT_SCHEMAS.list_messages,
      outputSchema: MessageListSchema,
      annotations: READ_ONLY,
    },
    (args, ctx) =>
      run(
        "list_messages",
        args,
        ctx,
        (p) => service.listMessages(p, args.chatId, { limit: args.limit, cursor: args.cursor }),
        (page) => pendingHint(page.data.find((message) => message.role === "assistant")),
      ),
  );

  tools.send_message = server.registerTool(
    "send_message",
    {
      title: "Send message",
      description:
        "Send a message to a chat and get the assistant's reply. Sending while the chat waits on a task " +
        "rejects that pending request.",
      inputSchema: TOOL_INPUT_SCHEMAS.send_message,
      outputSchema: MessageSchema,
      annotations: WRITES,
    },
    (args, ctx) =>
      run<Message>(
        "send_message",
        args,
        ctx,
        (p) => service.sendMessage(p, args.chatId, { message: args.message }, watchOf(ctx)),
        pendingHint,
      ),
  );

  tools.resolve_task = server.registerTool(
    "resolve_task",
    {
      title: "Resolve pending task",
      description:
        "Resolve what the latest blocked assistant message waits for, after the user agreed: " +
        '{"type":"confirmed-steps","connectedIntegrationNames":[exactly the requested integrations],' +
        '"connectedMcpPresetNames":[exactly the requested MCP presets]} once the user connected them (both lists ' +
        'empty goes on without them), or {"type":"confirmed-permissions","permissions":[the ' +
        "pending suggestedPermissions, unchanged]}. Returns the assistant's reply.",
      inputSchema: TOOL_INPUT_SCHEMAS.resolve_task,
      outputSchema: MessageSchema,
      annotations: WRITES,
    },
    (args, ctx) =>
      run<Message>(
        "resolve_task",
        args,
        ctx,
        (p, state) =>
          args.task
            ? service.resolveTask(p, args.chatId, args.task, watchOf(ctx))
            : resolveThroughElicitation(
                {
                  service,
                  states: toolsCtx.states,
                  clientCapabilities:
                    envelopeCapabilities(ctx.mcpReq.envelope) ?? server.server.getClientCapabilities(),
                  watch: watchOf(ctx),
                },
                p,
                args,
                state,
                ctx,
              ),
        pendingHint,
      ),
  );

  tools.get_preview = registerAppTool(
    server,
    "get_preview",
    {
      title: "Get preview",
      description: "The preview URL of a chat's app (in a host that shows MCP Apps, the preview itself).",
      inputSchema: TOOL_INPUT_SCHEMAS.get_preview,
      outputSchema: PreviewSchema,
      annotations: READ_ONLY,
      _meta: { ui: { resourceUri: PREVIEW_APP_URI } },
    },
    (args, ctx) => run("get_preview", args, ctx, (p) => service.getPreview(p, args.chatId)),
  );
  // A 2025-11-25 host may ask for these as tasks (the 2026-07-28 codec drops this member: there the server decides).
  for (const name of ["create_chat", "send_message"] as const)
    tools[name].execution = { taskSupport: "optional" };
  return tools;
}

/** What a blocked assistant message waits for, phrased as the next step. */
function pendingHint(message: Message | undefined): string | null {
  const pending = pendingTaskOf(message);
  if (!pending) return null;
  if (pending.kind === "integration") {
    const task = confirmedStepsFor(pending);
    const wanted = [
      ...(pending.integrations.length > 0 ? [`integrations ${pending.integrations.join(", ")}`] : []),
      ...(pending.mcpPresets.length > 0 ? [`MCP presets ${pending.mcpPresets.join(", ")}`] : []),
    ];
    return (
      `The assistant waits for ${wanted.join(" and ")}. Ask the user to connect them, ` +
      `then call resolve_task with chatId "${message?.chatId}" and task ${JSON.stringify(task)}.`
    );
  }
  const scripts = pending.permissions.map(
    (permission) => permission.input.executeScript ?? permission.toolName,
  );
  const task = { type: "confirmed-permissions", permissions: pending.permissions };
  return (
    `The assistant asks permission to run ${scripts.join(", ")}. If the user approves, call resolve_task with ` +
    `chatId "${message?.chatId}" and task ${JSON.stringify(task)}.`
  );
}

/** The error text a model can act on. */
function explain(error: unknown): string {
  if (!(error instanceof ServiceError)) {
    console.error("reference server: MCP tool failed:", error);
    return "The server failed to handle the request. Retry later.";
  }
  switch (error.code) {
    case "conflict":
      return (
        `Conflict: ${error.message} The chat has moved on since that task was pending. Call list_messages ` +
        "(limit 1) to re-read the latest assistant message and resolve only what it asks for now."
      );
    case "not_found":
      return `Not found: ${error.message} Check the id with list_chats (only chats of the connected account or team are visible).`;
    case "unprocessable":
      return (
        `Unprocessable: ${error.message} For confirmed-permissions pass the pending suggestedPermissions of the ` +
        "latest assistant message (from list_messages) unchanged."
      );
    case "bad_request":
      return `Invalid request: ${error.message} Fix the arguments and retry.`;
    case "sso_required": {
      const link = typeof error.extra.reauthUrl === "string" ? error.extra.reauthUrl : "";
      return (
        `SSO re-authentication required: ${error.message} Give the user this link to open in a browser: ${link} ` +
        "After they have completed it, retry the same tool call."
      );
    }
    case "rate_limited":
      return `Rate limited: ${error.message} Wait ${String(error.extra.retryAfter ?? "a few")} seconds, then retry.`;
    case "unauthorized":
    case "forbidden":
      return `${error.message} Reconnect the MCP server to sign in again.`;
    default:
      return `${error.message}`;
  }
}

/** The capabilities a modern request carries in its `_meta` envelope (absent on legacy requests). */
function envelopeCapabilities(envelope: object | undefined): ClientCapabilities | undefined {
  return (envelope as Record<string, ClientCapabilities | undefined> | undefined)?.[
    CLIENT_CAPABILITIES_META_KEY
  ];
}

export function failure(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

/**
 * The assistant's wait as the request sees it: its progress, and its cancellation (a 2025 `notifications/cancelled`
 * or a 2026-07-28 request whose stream the client closed), which calls the wait off before anything is written.
 */
function watchOf(ctx: ServerContext): AssistantWatch {
  return { onProgress: progressOf(ctx), signal: ctx.mcpReq.signal };
}

/**
 * MCP progress for a call whose request carries a `progressToken` (the MCP progress utility): each of the
 * assistant's steps becomes a `notifications/progress` on the request's own stream, in either era.
 */
function progressOf(ctx: ServerContext): OnAssistantProgress | undefined {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  return ({ progress, total, message }) => {
    if (ctx.mcpReq.signal.aborted) return;
    void ctx.mcpReq
      .notify({ method: "notifications/progress", params: { progressToken, progress, total, message } })
      .catch(() => undefined);
  };
}
