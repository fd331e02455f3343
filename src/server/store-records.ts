/** The records the reference server's store keeps (chats, API keys, assistant pauses), as zod schemas for its data file. */
import * as z from "zod";

/** Where a paused chat stands in the scripted assistant's flow (internal, never on the wire). */
export const AssistantPauseSchema = z.object({
  rule: z.string(),
  stage: z.enum(["integration", "permissions"]),
  /** The user's message that started the paused request. */
  request: z.string(),
});
export type AssistantPause = z.infer<typeof AssistantPauseSchema>;

export const StoredChatSchema = z.object({
  id: z.string(),
  account: z.string(),
  title: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  projectId: z.string(),
  hostProjectId: z.string().optional(),
  /** Store-wide sequence of the last update: orders chats newest-updated first, ties impossible. */
  seq: z.number().int(),
  pause: AssistantPauseSchema.optional(),
});
export type StoredChat = z.infer<typeof StoredChatSchema>;

export const ApiKeySchema = z.object({
  id: z.string(),
  account: z.string(),
  /** Dev keys are kept in clear so `startReferenceServer()` can hand the same ones out after a restart. */
  key: z.string(),
  createdAt: z.string(),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;
