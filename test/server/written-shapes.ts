/**
 * What the reference server writes ("as the reference server sends it"): the readers' schemas in
 * src/wire accept far less (the real service is in beta), so tests hold the writer to the full shape here.
 */
import * as z from "zod";
import { ChatSchema, FINISH_REASONS, MessageSchema, PreviewSchema } from "../../src/wire/index.js";

export const WrittenChatSchema = ChatSchema.extend({
  object: z.literal("chat"),
  title: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  hostProjectId: z.string().optional(),
  projectId: z.string(),
  url: z.string(),
});
export const WrittenMessageSchema = MessageSchema.extend({
  object: z.literal("message"),
  chatId: z.string(),
  role: z.enum(["user", "assistant"]),
  content: z.string(),
  createdAt: z.string(),
  finishReason: z.enum(FINISH_REASONS).nullable(),
});
export const WrittenPreviewSchema = PreviewSchema.extend({
  object: z.literal("preview"),
  chatId: z.string(),
});
const writtenList = <T extends z.ZodType>(item: T) =>
  z.strictObject({ object: z.literal("list"), data: z.array(item), nextCursor: z.string().nullable() });
export const WrittenChatListSchema = writtenList(WrittenChatSchema);
export const WrittenMessageListSchema = writtenList(WrittenMessageSchema);
