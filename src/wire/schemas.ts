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

/** Every non-2xx body: `{ error: { code, message, ... } }`; unknown codes and extra fields pass through. */
export const ErrorBodySchema = z.object({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    reauthUrl: z.string().optional(),
  }),
});
export interface ErrorBody {
  error: {
    code: ErrorCode | (string & {});
    message: string;
    reauthUrl?: string | undefined;
    [key: string]: unknown;
  };
}

/*
 * Response shapes are read leniently (the service is in beta): what the service's API description gives a type for keeps
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
/** A script permission the assistant asks for (`ALLOW_DYNAMIC_TOOL_STRICT`); pass it back unchanged to approve it. */
export interface Permission {
  type: string;
  toolName: string;
  input: { systemAction?: string | undefined; executeScript?: string | undefined; [key: string]: unknown };
  [key: string]: unknown;
}

/** A text part; the API description does not describe it, so `text` may be missing or null (still streaming). */
export const TextPartSchema = z.looseObject({ type: z.literal("text"), text: z.string().nullish() });
/** Text the assistant wrote. */
export interface TextPart {
  type: "text";
  /** Missing or null while it is still being written. */
  text?: string | null | undefined;
  [key: string]: unknown;
}

export const INTEGRATION_ACTION = "get_or_request_integration";

/** An agent-action part; for `get_or_request_integration` the API description gives `data` its shape. */
export const AgentActionPartSchema = z.looseObject({
  type: z.literal("agent-action"),
  name: z.string(),
  data: z
    .looseObject({
      requestedIntegrations: z.array(z.string()).nullish(),
      /** The API description says "array" and no more: items are kept as sent (names are strings in the reference server). */
      requestedMcpPresets: z.array(z.unknown()).nullish(),
    })
    .nullish(),
});
/** An action of the assistant's agent; `get_or_request_integration` pauses the chat until integrations are confirmed. */
export interface AgentActionPart {
  type: "agent-action";
  /** `"get_or_request_integration"` for an integration request. */
  name: string;
  data?: AgentActionData | null | undefined;
  [key: string]: unknown;
}

/** What an integration request asks for. */
export interface AgentActionData {
  requestedIntegrations?: string[] | null | undefined;
  /** Kept as sent: names (strings) from the reference server. */
  requestedMcpPresets?: unknown[] | null | undefined;
  [key: string]: unknown;
}

export const ToolCallPartSchema = z.looseObject({
  type: z.literal("tool-call"),
  name: z.string().nullish(),
  input: z.unknown().optional(),
  suggestedPermissions: z.array(PermissionSchema).nullish(),
});
/** A tool call; with `suggestedPermissions` it pauses the chat until they are approved. */
export interface ToolCallPart {
  type: "tool-call";
  name?: string | null | undefined;
  input?: unknown;
  suggestedPermissions?: Permission[] | null | undefined;
  [key: string]: unknown;
}

export const UnknownPartSchema = z.looseObject({ type: z.string() });
/** A part of a type this package does not know (`thinking`, `bash`, `file-edit`, ...), kept untouched. */
export interface UnknownPart {
  type: string;
  [key: string]: unknown;
}

/** The part types `MessagePart` names. */
export const KNOWN_PART_TYPES: readonly MessagePart["type"][] = ["text", "agent-action", "tool-call"];

const KNOWN_PART_SCHEMAS: Record<string, z.ZodType> = {
  text: TextPartSchema,
  "agent-action": AgentActionPartSchema,
  "tool-call": ToolCallPartSchema,
};

/**
 * Any part with a string `type`; a part of a known type must also match that type's schema (issues name its fields).
 * Typed as `MessagePart`, as `Message.parts` is: parts of other types pass too (see `asUnknownPart`).
 */
export const MessagePartSchema: z.ZodType<MessagePart> = UnknownPartSchema.check((ctx) => {
  const schema = KNOWN_PART_SCHEMAS[ctx.value.type];
  if (!schema) return;
  const parsed = schema.safeParse(ctx.value);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    ctx.issues.push({ code: "custom", message: issue.message, path: issue.path, input: ctx.value });
  }
}) as z.ZodType<UnknownPart> as z.ZodType<MessagePart>;
/**
 * A part of a type this package knows, which narrows on `type` (`if (part.type === "agent-action") part.data`).
 * The service may also send parts of other types (a newer service, a beta feature): they are kept in
 * `Message.parts` untouched, and `asUnknownPart(part)` gives them as `UnknownPart`, so a `switch` still narrows.
 */
export type MessagePart = TextPart | AgentActionPart | ToolCallPart;

/** The part as an `UnknownPart` when its type is none `MessagePart` names, else undefined. */
export function asUnknownPart(part: MessagePart | UnknownPart): UnknownPart | undefined {
  return (KNOWN_PART_TYPES as readonly string[]).includes(part.type) ? undefined : part;
}

/** A string field the API description does not name, or names without promising it: may be missing, or null while unknown. */
const maybeString = z.string().nullish();

export const ChatSchema = z.looseObject({
  id: z.string(),
  object: maybeString,
  title: maybeString,
  createdAt: maybeString,
  updatedAt: maybeString,
  hostProjectId: maybeString,
  projectId: maybeString,
  url: maybeString,
});
/** A chat as read: only `id` is certain; other fields may be missing or null, unknown ones are kept. */
export interface Chat {
  id: string;
  object?: string | null | undefined;
  title?: string | null | undefined;
  createdAt?: string | null | undefined;
  updatedAt?: string | null | undefined;
  /** The linked hosting project; absent (or null) when none is linked, and then the integration flow stops. */
  hostProjectId?: string | null | undefined;
  /** @deprecated the service's own project record, never the hosting project: use `hostProjectId`. */
  projectId?: string | null | undefined;
  /** Opens the chat for the token's account or team. */
  url?: string | null | undefined;
  [key: string]: unknown;
}

/** Finish reasons the reference server sends; readers accept any string, and null while still generating. */
export const FINISH_REASONS = ["stop", "tool-calls", "error"] as const;
/** `"tool-calls"`: blocked, waiting for the caller; null: still generating; other strings pass through. */
export type FinishReason = (typeof FINISH_REASONS)[number] | null | (string & {});

export const MessageSchema = z.looseObject({
  id: z.string(),
  object: maybeString,
  chatId: maybeString,
  role: maybeString,
  content: maybeString,
  parts: z.array(MessagePartSchema),
  createdAt: maybeString,
  finishReason: maybeString,
});
/** A message as read: `id` and `parts` are certain; other fields may be missing or null, unknown ones are kept. */
export interface Message {
  id: string;
  object?: string | null | undefined;
  chatId?: string | null | undefined;
  /** `"user"` or `"assistant"` from the reference server; other roles pass through. */
  role?: "user" | "assistant" | (string & {}) | null | undefined;
  content?: string | null | undefined;
  /** Parts of other types than `MessagePart` names are kept here too: see `asUnknownPart`. */
  parts: MessagePart[];
  createdAt?: string | null | undefined;
  finishReason?: FinishReason | undefined;
  [key: string]: unknown;
}

export const PreviewSchema = z.looseObject({
  object: maybeString,
  chatId: maybeString,
  url: z.string(),
});
/** Where the chat's app preview is. */
export interface Preview {
  object?: string | null | undefined;
  chatId?: string | null | undefined;
  url: string;
  [key: string]: unknown;
}

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

export const ConfirmedStepsTaskSchema = z.object({
  type: z.literal("confirmed-steps"),
  connectedIntegrationNames: z.array(z.string()),
  connectedMcpPresetNames: z.array(z.string()).optional(),
});
/** Confirms an integration request with the names exactly as requested; both lists empty (or absent) rejects it. */
export interface ConfirmedStepsTask {
  type: "confirmed-steps";
  connectedIntegrationNames: string[];
  connectedMcpPresetNames?: string[] | undefined;
}

export const ConfirmedPermissionsTaskSchema = z.object({
  type: z.literal("confirmed-permissions"),
  permissions: z.array(PermissionSchema),
});
/** Approves the pending permissions, passed back unchanged. */
export interface ConfirmedPermissionsTask {
  type: "confirmed-permissions";
  permissions: Permission[];
}

/** Any other task type (answer a question, approve a plan, ...): sent unchanged. */
export const OtherTaskSchema = z.looseObject({ type: z.string().min(1) });
declare const otherTaskBrand: unique symbol;
/**
 * A task of a type this package does not know, made with `otherTask({ type, ... })` and sent unchanged. Made only
 * that way, so a typo in a known task (`{ type: "confirmed-step" }`) fails to compile instead of being sent.
 */
export type OtherTask = { type: string; [key: string]: unknown } & { readonly [otherTaskBrand]: true };

/** A task of another type, sent unchanged by `resolveTask` (the service judges it). */
export function otherTask(task: { type: string; [key: string]: unknown }): OtherTask {
  return task as OtherTask;
}

/** The two known variants are checked strictly when their `type` matches; any other type passes through. */
export const TaskSchema: z.ZodType<Task | OtherTask> = z
  .union([ConfirmedStepsTaskSchema, ConfirmedPermissionsTaskSchema])
  .or(
    OtherTaskSchema.refine((t) => t.type !== "confirmed-steps" && t.type !== "confirmed-permissions", {
      message: "malformed task of a known type",
    }),
  ) as z.ZodType<unknown> as z.ZodType<Task | OtherTask>;
/** A task that resolves a pause; narrows on `type`. `resolveTask` also takes an `OtherTask`. */
export type Task = ConfirmedStepsTask | ConfirmedPermissionsTask;

/** Request bodies. */
export const MAX_MESSAGE_LENGTH = 100_000;
export const CreateChatBodySchema = z.object({
  message: z.string().min(1).max(MAX_MESSAGE_LENGTH),
  title: z.string().min(1).max(200).optional(),
});
/** The body of `createChat`: the first message (1-100 000 characters) and an optional title (1-200). */
export interface CreateChatBody {
  message: string;
  title?: string | undefined;
}

export const SendMessageBodySchema = z.object({ message: z.string().min(1).max(MAX_MESSAGE_LENGTH) });
/** The body of `sendMessage`. */
export interface SendMessageBody {
  message: string;
}

export const ResolveBodySchema = z.object({ task: TaskSchema });

/** Query strings of the list endpoints (strings on the wire, coerced here). */
export const LIMIT_MAX = 100;
export const LIMIT_DEFAULT = 20;
export const ListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(LIMIT_MAX).default(LIMIT_DEFAULT),
  cursor: z.string().min(1).max(512).optional(),
});
export const ListChatsQuerySchema = ListQuerySchema.extend({ topic: z.string().max(200).optional() });
/** Query of `listChats`: `topic` matches title or message text (case-insensitive); `limit` 1-100 (default 20). */
export interface ListChatsParams {
  topic?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}
/** Query of `listMessages`: `limit` 1-100 (default 20). */
export interface ListMessagesParams {
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** Ids in paths: opaque, printable, bounded (no slashes, dots-only or control characters). */
export const IdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1-128 letters, digits, '_' or '-'");
