// The zod schemas (the runtime source) and the declared interfaces (what hovers show) describe the same shapes.

import type {
  AgentActionPart,
  AgentActionPartSchema,
  Chat,
  ChatSchema,
  ConfirmedPermissionsTask,
  ConfirmedPermissionsTaskSchema,
  ConfirmedStepsTask,
  ConfirmedStepsTaskSchema,
  ErrorBody,
  ErrorBodySchema,
  Message,
  MessageSchema,
  Permission,
  PermissionSchema,
  Preview,
  PreviewSchema,
  TextPart,
  TextPartSchema,
  ToolCallPart,
  ToolCallPartSchema,
} from "chat-mcp-bridge";
import type * as z from "zod";

/** True only when A and B are assignable both ways. */
type Agree<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function agree<T extends true>(): T | undefined {
  return undefined;
}

agree<Agree<z.output<typeof ChatSchema>, Chat>>();
agree<Agree<z.output<typeof MessageSchema>, Message>>();
agree<Agree<z.output<typeof PreviewSchema>, Preview>>();
agree<Agree<z.output<typeof PermissionSchema>, Permission>>();
agree<Agree<z.output<typeof TextPartSchema>, TextPart>>();
agree<Agree<z.output<typeof AgentActionPartSchema>, AgentActionPart>>();
agree<Agree<z.output<typeof ToolCallPartSchema>, ToolCallPart>>();
agree<Agree<z.output<typeof ConfirmedStepsTaskSchema>, ConfirmedStepsTask>>();
agree<Agree<z.output<typeof ConfirmedPermissionsTaskSchema>, ConfirmedPermissionsTask>>();
agree<Agree<z.output<typeof ErrorBodySchema>, ErrorBody>>();
// @ts-expect-error the check itself can fail: a chat is not a preview
agree<Agree<z.output<typeof ChatSchema>, Preview>>();
