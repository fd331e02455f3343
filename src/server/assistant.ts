/** The deterministic scripted assistant: a rules table that drives the service's pause rules (docs/reference-server.md's table: integrations, permissions, presets). */
import {
  type AgentActionPart,
  type FinishReason,
  INTEGRATION_ACTION,
  type MessagePart,
  type Permission,
  type ToolCallPart,
} from "../wire/index.js";
import type { AssistantPause } from "./store.js";

/** One behaviour of the assistant. The first rule whose `matches` accepts the user's message handles it. */
export interface AssistantRule {
  name: string;
  matches(text: string): boolean;
  /** Integrations the request cannot go on without: the assistant pauses on an agent-action asking for them. */
  integrations?: string[];
  /** MCP presets it asks for in the same agent-action (a request may ask for presets only). */
  mcpPresets?: string[];
  /** Script the assistant asks permission to run once the integrations are connected. */
  script?: string;
  say: {
    /** The answer when nothing needs the caller (and the final answer after every pause is resolved). */
    done(request: string): string;
    askIntegrations?(integrations: string[], mcpPresets: string[]): string;
    askPermission?(script: string): string;
    /** The answer when the caller rejects the integration request; `names` are its integrations and presets. */
    withoutIntegrations?(names: string[]): string;
  };
}

const DATABASE = /database/i;
const ISSUES = /issues/i;

/** Add a row here to teach the assistant a new flow; the last row answers everything else. */
export const ASSISTANT_RULES: AssistantRule[] = [
  {
    name: "database-and-issues",
    matches: (text) => DATABASE.test(text) && ISSUES.test(text),
    integrations: ["Neon"],
    mcpPresets: ["Linear"],
    script: "/scripts/setup-db.sql",
    say: {
      askIntegrations: (integrations, presets) =>
        `This needs a database and an issue tracker. Please connect the ${integrations.join(", ")} integration ` +
        `and the ${presets.join(", ")} MCP preset to the project, then confirm both to continue.`,
      askPermission: (script) =>
        `The integration and the MCP preset are connected. To create the tables I need to run ${script}. ` +
        `Approve the permission to let me run it, or send another message to skip it.`,
      done: () =>
        "Ran /scripts/setup-db.sql: the database is ready, and issues are tracked through the Linear MCP preset.",
      withoutIntegrations: (names) =>
        `Understood, I will go on without ${names.join(", ")}: data stays in memory and issues in a local list.`,
    },
  },
  {
    name: "database",
    matches: (text) => DATABASE.test(text),
    integrations: ["Neon"],
    mcpPresets: [],
    script: "/scripts/setup-db.sql",
    say: {
      askIntegrations: (integrations) =>
        `This needs a database. Please connect the ${integrations.join(", ")} integration to the project, ` +
        `then confirm the connected integrations to continue.`,
      askPermission: (script) =>
        `The integration is connected. To create the tables I need to run ${script}. ` +
        `Approve the permission to let me run it, or send another message to skip it.`,
      done: () => "Ran /scripts/setup-db.sql: the database is connected and its tables are ready.",
      withoutIntegrations: (names) =>
        `Understood, I will go on without ${names.join(", ")}: the app will keep its data in memory for now.`,
    },
  },
  {
    name: "issues",
    matches: (text) => ISSUES.test(text),
    mcpPresets: ["Linear"],
    say: {
      askIntegrations: (_integrations, presets) =>
        `This needs an issue tracker. Please connect the ${presets.join(", ")} MCP preset to the project, ` +
        `then confirm it to continue.`,
      done: () => "The Linear MCP preset is connected: issues are tracked in Linear.",
      withoutIntegrations: (names) =>
        `Understood, I will go on without ${names.join(", ")}: issues stay in a local list for now.`,
    },
  },
  {
    name: "reply",
    matches: () => true,
    say: { done: (request) => `Done: ${summarize(request)}` },
  },
];

/** What the assistant answers: content, parts (a text part mirrors content) and whether it pauses. */
export interface AssistantTurn {
  content: string;
  parts: MessagePart[];
  finishReason: FinishReason;
  /** Set when the turn pauses the chat (finishReason "tool-calls"). */
  pause?: AssistantPause;
}

export class ScriptedAssistant {
  constructor(readonly rules: readonly AssistantRule[] = ASSISTANT_RULES) {}

  /** Answers a user's message; `dropped` is a pause that this message rejected by moving on. */
  reply(text: string, dropped?: AssistantPause): AssistantTurn {
    const rule =
      this.rules.find((candidate) => candidate.matches(text)) ?? this.rules[this.rules.length - 1]!;
    const turn = this.#advance(rule, text, "start");
    if (dropped && turn.finishReason === "stop") {
      const note = `(Skipped the pending ${dropped.stage === "integration" ? "integration request" : "permission request"}.) `;
      return stop(note + turn.content);
    }
    return turn;
  }

  /** The caller connected the requested integrations. */
  integrationsConnected(pause: AssistantPause): AssistantTurn {
    return this.#advance(this.#ruleOf(pause), pause.request, "integrations-connected");
  }

  /** The caller rejected the integration request (empty `connectedIntegrationNames`). */
  integrationsRejected(pause: AssistantPause): AssistantTurn {
    const rule = this.#ruleOf(pause);
    const names = [...(rule.integrations ?? []), ...(rule.mcpPresets ?? [])];
    return stop(rule.say.withoutIntegrations?.(names) ?? `Going on without ${names.join(", ")}.`);
  }

  /** The caller approved the pending permissions. */
  permissionsApproved(pause: AssistantPause): AssistantTurn {
    return stop(this.#ruleOf(pause).say.done(pause.request));
  }

  #advance(rule: AssistantRule, request: string, from: "start" | "integrations-connected"): AssistantTurn {
    const integrations = rule.integrations ?? [];
    const mcpPresets = rule.mcpPresets ?? [];
    if (from === "start" && (integrations.length > 0 || mcpPresets.length > 0)) {
      const content =
        rule.say.askIntegrations?.(integrations, mcpPresets) ??
        `Please connect ${[...integrations, ...mcpPresets].join(", ")}.`;
      const action: AgentActionPart = {
        type: "agent-action",
        name: INTEGRATION_ACTION,
        data: { requestedIntegrations: [...integrations], requestedMcpPresets: [...mcpPresets] },
      };
      return paused(content, action, { rule: rule.name, stage: "integration", request });
    }
    if (rule.script) {
      const content = rule.say.askPermission?.(rule.script) ?? `May I run ${rule.script}?`;
      const permission: Permission = {
        type: "ALLOW_DYNAMIC_TOOL_STRICT",
        toolName: "SystemAction",
        input: { systemAction: "executeScript", executeScript: rule.script },
      };
      const toolCall: ToolCallPart = {
        type: "tool-call",
        name: "SystemAction",
        input: { systemAction: "executeScript", executeScript: rule.script },
        suggestedPermissions: [permission],
      };
      return paused(content, toolCall, { rule: rule.name, stage: "permissions", request });
    }
    return stop(rule.say.done(request));
  }

  #ruleOf(pause: AssistantPause): AssistantRule {
    const rule = this.rules.find((candidate) => candidate.name === pause.rule);
    if (!rule) throw new Error(`No assistant rule named ${pause.rule}`);
    return rule;
  }
}

function stop(content: string): AssistantTurn {
  return { content, parts: [{ type: "text", text: content }], finishReason: "stop" };
}

function paused(content: string, part: MessagePart, pause: AssistantPause): AssistantTurn {
  return { content, parts: [{ type: "text", text: content }, part], finishReason: "tool-calls", pause };
}

function summarize(text: string): string {
  const line = text.trim().replace(/\s+/g, " ");
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}
