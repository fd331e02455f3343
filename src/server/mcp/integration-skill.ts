/** The integration flow as an MCP skill (SEP-2640, `skills/list` and `skills/get`), served with the SDK's Skills extension. */
import { type Skill, SkillsExtension, skillEntry } from "@modelcontextprotocol/server/ext/skills";

/** The skill's folder name, which its frontmatter `name` must equal. */
export const INTEGRATION_SKILL_NAME = "chat-integration-flow";

/** `SKILL.md`: what an agent reads to drive a chat through its two pauses with these tools. */
export const INTEGRATION_SKILL_TEXT = `---
name: ${INTEGRATION_SKILL_NAME}
description: Drive a chat that needs an integration to the end with this server's tools - create it, read what the assistant asks for, confirm the integrations and MCP presets, approve the setup script, then show the preview.
---

# Connecting an integration through a chat

Use this when a chat's assistant asks for an integration (for example a database, "Neon") or an MCP preset
(for example "Linear"). The assistant pauses twice: first for the integrations, then for permission to run a
setup script. Never resolve a pause the user has not agreed to.

1. **Create the chat.** Call \`create_chat\` with the user's request as \`message\`. Keep the chat's \`id\`.
2. **Read the latest assistant message.** Call \`list_messages\` with that \`chatId\` (newest first) and take the
   first message whose \`role\` is \`"assistant"\`. If its \`finishReason\` is not \`"tool-calls"\`, nothing is
   pending: you are done. Otherwise read its \`parts\`.
3. **Find what it asks for.** A part with \`type: "agent-action"\` and \`name: "get_or_request_integration"\`
   carries \`data.requestedIntegrations\` and \`data.requestedMcpPresets\`. Tell the user which integrations
   and presets the assistant wants, and ask them to connect them.
4. **Check the hosting project.** Call \`get_chat\` with the \`chatId\`. If the chat has no \`hostProjectId\`,
   stop: its account or team has no hosting project linked, so integrations cannot be connected. Tell the user
   to link a hosting project first. Do not call \`resolve_task\`.
5. **Confirm the steps.** Once the user has connected them, call \`resolve_task\` with the \`chatId\` and
   \`task\` \`{"type": "confirmed-steps", "connectedIntegrationNames": [...], "connectedMcpPresetNames": [...]}\`,
   using exactly the requested names (any order, nothing added, nothing renamed). To go on without them, send
   both lists empty.
6. **The permission pause.** The reply is the assistant's next message. If it has \`finishReason:
   "tool-calls"\` again, find the part with \`type: "tool-call"\` and \`suggestedPermissions\`: each names a
   script the assistant wants to run (\`input.executeScript\`). Show the user the scripts and ask whether to
   allow them.
7. **Approve the permissions.** If the user agrees, call \`resolve_task\` with the \`chatId\` and \`task\`
   \`{"type": "confirmed-permissions", "permissions": [...]}\`, the pending \`suggestedPermissions\` unchanged.
   The assistant then finishes (\`finishReason: "stop"\`).
8. **Show the result.** Call \`get_preview\` with the \`chatId\`: its \`url\` (or its App, in a host that shows MCP
   Apps) shows the chat's preview to a member of its account or team.

A \`409\`-style conflict from \`resolve_task\` means the chat moved on: read the latest assistant message again
(step 2) and resolve only what it asks for now. \`create_chat\` and \`send_message\` may answer as a task in a
host that supports tasks: poll it to its end before step 2.
`;

/** Every server of `/mcp` serves this one extension instance (it holds no per-server state). */
export function integrationSkills(): SkillsExtension {
  let entry: Promise<Skill> | undefined;
  const skill = () => {
    entry ??= skillEntry(INTEGRATION_SKILL_NAME, { "SKILL.md": INTEGRATION_SKILL_TEXT });
    return entry;
  };
  return new SkillsExtension({
    source: {
      list: async () => ({ skills: [await skill()] }),
      get: async (uri) => ((await skill()).uri === uri ? skill() : undefined),
      read: async (uri) =>
        (await skill()).uri === uri ? { text: INTEGRATION_SKILL_TEXT, mimeType: "text/markdown" } : undefined,
    },
  });
}
