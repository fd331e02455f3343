/**
 * Public entry of `chat-mcp-bridge`: ChatClient, its pages and errors, the wire types and zod schemas, and the
 * pending-task helpers. It runs on Web `fetch` alone (Node, Bun, Deno, browsers, edge runtimes); on Node the
 * proxy variables and the `chat-cli login` credentials load on first use.
 */
export { APIPromise, type APIResponse, type WithRequestId } from "./client/api-promise.js";
export {
  ChatClient,
  type ChatClientOptions,
  type FetchLike,
  type HeadersOption,
  type RequestOptions,
} from "./client/client.js";
export {
  AuthenticationError,
  BadRequestError,
  ChatAbortError,
  ChatApiError,
  ChatConnectionError,
  ChatError,
  ChatTimeoutError,
  ConflictError,
  InternalServerError,
  MissingHostProjectError,
  NoPendingTaskError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ResponseTooLargeError,
  ResponseValidationError,
  UnprocessableEntityError,
} from "./client/errors.js";
export type { Logger, LogLevel } from "./client/logger.js";
export { Page, PagePromise } from "./client/pagination.js";
export {
  approvedPermissionsFor,
  confirmedStepsFor,
  findIntegrationRequest,
  findPendingPermissions,
  type IntegrationRequest,
  type PendingTask,
  pendingTaskOf,
  rejectedStepsFor,
} from "./wire/pending.js";
export {
  type AgentActionData,
  type AgentActionPart,
  AgentActionPartSchema,
  asUnknownPart,
  type Chat,
  ChatListSchema,
  ChatSchema,
  type ConfirmedPermissionsTask,
  ConfirmedPermissionsTaskSchema,
  type ConfirmedStepsTask,
  ConfirmedStepsTaskSchema,
  type CreateChatBody,
  type ErrorBody,
  ErrorBodySchema,
  type ErrorCode,
  type FinishReason,
  type ListChatsParams,
  type ListMessagesParams,
  type ListPage,
  type Message,
  MessageListSchema,
  type MessagePart,
  MessagePartSchema,
  MessageSchema,
  type OtherTask,
  otherTask,
  type Permission,
  PermissionSchema,
  type Preview,
  PreviewSchema,
  type SendMessageBody,
  type Task,
  TaskSchema,
  type TextPart,
  TextPartSchema,
  type ToolCallPart,
  ToolCallPartSchema,
  type UnknownPart,
} from "./wire/schemas.js";
