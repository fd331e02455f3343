/** Names and zod input shapes of the reference MCP server's tools, shared by server, demo and tests. */
import * as z from "zod";
import { IdSchema, LIMIT_MAX, MAX_MESSAGE_LENGTH, TaskSchema } from "./schemas.js";

const chatId = IdSchema.describe("Id of the chat");
const limit = z.number().int().min(1).max(LIMIT_MAX).optional().describe("Page size, 1-100 (default 20)");
const cursor = z.string().min(1).max(512).optional().describe("nextCursor of the previous page");

export const TOOL_INPUTS = {
  create_chat: {
    message: z.string().min(1).max(MAX_MESSAGE_LENGTH).describe("The first message (prompt) of the chat"),
    title: z.string().min(1).max(200).optional().describe("Title; defaults to the start of the message"),
  },
  list_chats: {
    topic: z.string().max(200).optional().describe("Only chats whose title or messages mention this"),
    limit,
    cursor,
  },
  get_chat: { chatId },
  list_messages: { chatId, limit, cursor },
  send_message: {
    chatId,
    message: z.string().min(1).max(MAX_MESSAGE_LENGTH).describe("The message to send"),
  },
  resolve_task: {
    chatId,
    task: TaskSchema.describe(
      'The task resolving the pause: {"type":"confirmed-steps","connectedIntegrationNames":[...],' +
        '"connectedMcpPresetNames":[...]} or ' +
        '{"type":"confirmed-permissions","permissions":[...pending permissions unchanged]}',
    ),
  },
  get_preview: { chatId },
} as const;

export type ToolName = keyof typeof TOOL_INPUTS;
export const TOOL_NAMES = Object.keys(TOOL_INPUTS) as ToolName[];
