/** Zod schemas of the /v2 wire format: the single definition shared by client, server, CLI and tests. */
import * as z from "zod";

/** The service's error codes, each with the HTTP status it is sent with. */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  sso_required: 403,
  not_found: 404,
  conflict: 409,
  /** An `Idempotency-Key` sent again with another request. */
  idempotency_key_reused: 409,
  /** An `Idempotency-Key` whose first request still runs (retry after `Retry-After`). */
  idempotency_key_in_progress: 409,
  payload_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]);

/** Every non-2xx body: `{ error: { code, message, ... } }`; unknown codes and extra fields pass through. */
export const ErrorBodySchema = z.object({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    reauthUrl: z.string().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/*
 * Response shapes are read leniently (the service is in beta): what the seed gives a type for keeps
 * that type, every other field may be missing or null, and unknown fields, part types, roles and finish reasons
 * pass through untouched. Only what the flow cannot do without is required: a chat's or message's `id`, and a
 * message's `parts` array.
 */

/** A script permission the assistant asks for; extra fields are preserved as sent. */
export const PermissionSchema = z.looseObject({
  type: z.string(),
  toolName: z.string(),
  input: z.looseObject({
    systemAction: z.string().optional(),
    executeScript: z.string().optional(),
  }),
});
export type Permission = z.infer<typeof PermissionSchema>;

/** A text part; the seed does not describe it, so `text` may be missing or null (still streaming). */
export const TextPartSchema = z.looseObject({ type: z.literal("text"), text: z.string().nullish() });
export type TextPart = z.infer<typeof TextPartSchema>;

export const INTEGRATION_ACTION = "get_or_request_integration";

/** An agent-action part; for `get_or_request_integration` the seed gives `data` its shape. */
export const AgentActionPartSchema = z.looseObject({
  type: z.literal("agent-action"),
  name: z.string(),
  data: z
    .looseObject({
      requestedIntegrations: z.array(z.string()).nullish(),
      /** The seed says "array" and no more: items are kept as sent (names are strings in the reference server). */
      requestedMcpPresets: z.array(z.unknown()).nullish(),
    })
    .nullish(),
});
export type AgentActionPart = z.infer<typeof AgentActionPartSchema>;

export const ToolCallPartSchema = z.looseObject({
  type: z.literal("tool-call"),
  name: z.string().nullish(),
  input: z.unknown().optional(),
  suggestedPermissions: z.array(PermissionSchema).nullish(),
});
export type ToolCallPart = z.infer<typeof ToolCallPartSchema>;

/** A part of a type this package does not know (`thinking`, `bash`, `file-edit`, ...): kept untouched. */
export const UnknownPartSchema = z.looseObject({ type: z.string() });
export type UnknownPart = z.infer<typeof UnknownPartSchema>;

const KNOWN_PART_SCHEMAS: Record<string, z.ZodType> = {
  text: TextPartSchema,
  "agent-action": AgentActionPartSchema,
  "tool-call": ToolCallPartSchema,
};

/** Any part with a string `type`; a part of a known type must also match that type's schema (issues name its fields). */
export const MessagePartSchema = UnknownPartSchema.check((ctx) => {
  const schema = KNOWN_PART_SCHEMAS[ctx.value.type];
  if (!schema) return;
  const parsed = schema.safeParse(ctx.value);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    ctx.issues.push({ code: "custom", message: issue.message, path: issue.path, input: ctx.value });
  }
});
export type MessagePart = TextPart | AgentActionPart | ToolCallPart | UnknownPart;

/** A string field the seed does not name, or names without promising it: may be missing, or null while unknown. */
const maybeString = z.string().nullish();

export const ChatSchema = z.looseObject({
  id: z.string(),
  object: maybeString,
  title: maybeString,
  createdAt: maybeString,
  updatedAt: maybeString,
  /** The linked hosting project; absent (or null) when none is linked, and then the integration flow stops. */
  hostProjectId: maybeString,
  /** @deprecated the service's own project record, never the hosting project: use `hostProjectId`. */
  projectId: maybeString,
  url: maybeString,
});
export type Chat = z.infer<typeof ChatSchema>;

/** Finish reasons the reference server sends; readers accept any string, and null while still generating. */
export const FINISH_REASONS = ["stop", "tool-calls", "error"] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

export const MessageSchema = z.looseObject({
  id: z.string(),
  object: maybeString,
  chatId: maybeString,
  /** `"user"` or `"assistant"` from the reference server; other roles pass through. */
  role: maybeString,
  content: maybeString,
  parts: z.array(MessagePartSchema),
  createdAt: maybeString,
  /** `"stop"`, `"tool-calls"` (blocked), `"error"`, any other string, null (still generating) or absent. */
  finishReason: maybeString,
});
export type Message = z.infer<typeof MessageSchema>;

export const PreviewSchema = z.looseObject({
  object: maybeString,
  chatId: maybeString,
  url: z.string(),
});
export type Preview = z.infer<typeof PreviewSchema>;

/** A page of a list endpoint as read: `data` must be an array; a missing or null `nextCursor` is the last page. */
export function listPageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({ object: maybeString, data: z.array(item), nextCursor: z.string().nullish() });
}
/** A page as the reference server writes it. */
export interface ListPage<T> {
  object: "list";
  data: T[];
  nextCursor: string | null;
}
export const ChatListSchema = listPageSchema(ChatSchema);
export const MessageListSchema = listPageSchema(MessageSchema);

/** Confirms an integration request with the names exactly as requested; both lists empty (or absent) rejects it. */
export const ConfirmedStepsTaskSchema = z.object({
  type: z.literal("confirmed-steps"),
  connectedIntegrationNames: z.array(z.string()),
  connectedMcpPresetNames: z.array(z.string()).optional(),
});
export type ConfirmedStepsTask = z.infer<typeof ConfirmedStepsTaskSchema>;

export const ConfirmedPermissionsTaskSchema = z.object({
  type: z.literal("confirmed-permissions"),
  permissions: z.array(PermissionSchema),
});
export type ConfirmedPermissionsTask = z.infer<typeof ConfirmedPermissionsTaskSchema>;

/** Any other task type (answer a question, approve a plan, ...): sent unchanged. */
export const OtherTaskSchema = z.looseObject({ type: z.string().min(1) });
export type OtherTask = z.infer<typeof OtherTaskSchema>;

/** The two known variants are checked strictly when their `type` matches; any other type passes through. */
export const TaskSchema = z.union([ConfirmedStepsTaskSchema, ConfirmedPermissionsTaskSchema]).or(
  OtherTaskSchema.refine((t) => t.type !== "confirmed-steps" && t.type !== "confirmed-permissions", {
    message: "malformed task of a known type",
  }),
);
export type Task = ConfirmedStepsTask | ConfirmedPermissionsTask | OtherTask;

/** Request bodies. */
export const MAX_MESSAGE_LENGTH = 100_000;
export const CreateChatBodySchema = z.object({
  message: z.string().min(1).max(MAX_MESSAGE_LENGTH),
  title: z.string().min(1).max(200).optional(),
});
export type CreateChatBody = z.infer<typeof CreateChatBodySchema>;

export const SendMessageBodySchema = z.object({ message: z.string().min(1).max(MAX_MESSAGE_LENGTH) });
export type SendMessageBody = z.infer<typeof SendMessageBodySchema>;

export const ResolveBodySchema = z.object({ task: TaskSchema });
export type ResolveBody = z.infer<typeof ResolveBodySchema>;

/** Query strings of the list endpoints (strings on the wire, coerced here). */
export const LIMIT_MAX = 100;
export const LIMIT_DEFAULT = 20;
export const ListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(LIMIT_MAX).default(LIMIT_DEFAULT),
  cursor: z.string().min(1).max(512).optional(),
});
export const ListChatsQuerySchema = ListQuerySchema.extend({ topic: z.string().max(200).optional() });
export type ListChatsParams = { topic?: string; limit?: number; cursor?: string };
export type ListMessagesParams = { limit?: number; cursor?: string };

/** Ids in paths: opaque, printable, bounded (no slashes, dots-only or control characters). */
export const IdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1-128 letters, digits, '_' or '-'");
