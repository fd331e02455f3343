/** Pure readers of what a blocked assistant message waits for; shared by the client, the server and the CLI. */
import {
  type AgentActionPart,
  type ConfirmedPermissionsTask,
  type ConfirmedStepsTask,
  INTEGRATION_ACTION,
  type Message,
  type Permission,
} from "./schemas.js";

export interface IntegrationRequest {
  integrations: string[];
  /** Names of the requested MCP presets, as sent (`connectedMcpPresetNames` confirms exactly these). */
  mcpPresets: string[];
  part: AgentActionPart;
}

/** The `get_or_request_integration` agent-action of a message, or null when it has none. */
export function findIntegrationRequest(message: Pick<Message, "parts">): IntegrationRequest | null {
  for (const part of message.parts) {
    if (part.type === "agent-action" && part.name === INTEGRATION_ACTION) {
      return {
        integrations: [...(part.data?.requestedIntegrations ?? [])],
        mcpPresets: (part.data?.requestedMcpPresets ?? []).map(presetName),
        part,
      };
    }
  }
  return null;
}

/**
 * The name of a requested MCP preset: the string itself (as the reference server sends it), or the `name` of a
 * preset sent as an object; anything else as its JSON, so it still shows and still fails to match loudly.
 */
export function presetName(preset: unknown): string {
  if (typeof preset === "string") return preset;
  const name = (preset as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : JSON.stringify(preset);
}

/** The `suggestedPermissions` of the message's tool-call parts, unchanged, or null when there are none. */
export function findPendingPermissions(message: Pick<Message, "parts">): Permission[] | null {
  const found: Permission[] = [];
  for (const part of message.parts) {
    if (part.type === "tool-call" && Array.isArray(part.suggestedPermissions))
      found.push(...part.suggestedPermissions);
  }
  return found.length > 0 ? found : null;
}

export type PendingTask =
  | { kind: "integration"; message: Message; integrations: string[]; mcpPresets: string[] }
  | { kind: "permissions"; message: Message; permissions: Permission[] };

/** True when `finishReason` says the message is over: any string but "tool-calls" (absent or null says nothing). */
export function isFinal(finishReason: string | null | undefined): boolean {
  return typeof finishReason === "string" && finishReason !== "tool-calls";
}

/**
 * What the chat waits for, judged from its latest assistant message only and read from its parts: null when that message asks for nothing, or when a final `finishReason` says it is not blocked.
 */
export function pendingTaskOf(latestAssistantMessage: Message | undefined | null): PendingTask | null {
  const message = latestAssistantMessage;
  if (message?.role !== "assistant" || isFinal(message.finishReason)) return null;
  const integration = findIntegrationRequest(message);
  if (integration) {
    return {
      kind: "integration",
      message,
      integrations: integration.integrations,
      mcpPresets: integration.mcpPresets,
    };
  }
  const permissions = findPendingPermissions(message);
  if (permissions) return { kind: "permissions", message, permissions };
  return null;
}

type IntegrationPending = Extract<PendingTask, { kind: "integration" }>;

/**
 * The `confirmed-steps` task that confirms an integration request: the integrations (by default exactly the
 * requested ones) and the requested MCP presets, the latter only when some were requested. A request for presets
 * only is confirmed by its preset names with empty integration names, never turned into a rejection.
 */
export function confirmedStepsFor(
  pending: Pick<IntegrationPending, "integrations" | "mcpPresets">,
  integrations: readonly string[] = pending.integrations,
): ConfirmedStepsTask {
  return {
    type: "confirmed-steps",
    connectedIntegrationNames: [...integrations],
    ...(pending.mcpPresets.length > 0 ? { connectedMcpPresetNames: [...pending.mcpPresets] } : {}),
  };
}

/** The `confirmed-steps` task that rejects an integration request: every list empty. */
export function rejectedStepsFor(pending: Pick<IntegrationPending, "mcpPresets">): ConfirmedStepsTask {
  return {
    type: "confirmed-steps",
    connectedIntegrationNames: [],
    ...(pending.mcpPresets.length > 0 ? { connectedMcpPresetNames: [] } : {}),
  };
}

/** The `confirmed-permissions` task that approves the pending permissions unchanged. */
export function approvedPermissionsFor(pending: {
  permissions: readonly Permission[];
}): ConfirmedPermissionsTask {
  return { type: "confirmed-permissions", permissions: [...pending.permissions] };
}

/** Canonical JSON (sorted keys) so permission objects compare by meaning, not by key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** True when two permission lists are equal in meaning (same objects, same order-insensitive multiset). */
export function samePermissions(a: readonly Permission[], b: readonly Permission[]): boolean {
  return sameNames(a.map(canonicalJson), b.map(canonicalJson));
}

/** True when the names are exactly the requested ones, in any order. */
export function sameNames(requested: readonly string[], given: readonly string[]): boolean {
  return JSON.stringify([...requested].sort()) === JSON.stringify([...given].sort());
}
