// What a user writes with a typo fails to compile; what they write right compiles.
import { ChatClient, otherTask, type Task } from "chat-mcp-bridge";

const client = new ChatClient({ baseUrl: "http://127.0.0.1:8787", token: "t" });

export const right: Task[] = [
  { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] },
  { type: "confirmed-steps", connectedIntegrationNames: [], connectedMcpPresetNames: ["github"] },
  { type: "confirmed-permissions", permissions: [] },
];
client.resolveTask("chat_1", otherTask({ type: "answer-question", answer: "yes" }));

// @ts-expect-error a task type with a typo
export const wrongType: Task = { type: "confirmed-step", connectedIntegrationNames: ["Neon"] };
// @ts-expect-error a field name with a typo
export const wrongField: Task = { type: "confirmed-steps", connectedIntegrationName: ["Neon"] };
// @ts-expect-error resolveTask refuses a typo too (other task types go through otherTask)
client.resolveTask("chat_1", { type: "confirmed-permission", permissions: [] });
// @ts-expect-error an option that does not exist
new ChatClient({ baseUrl: "http://x", timeout: 5 });
// @ts-expect-error the test seam is not public
new ChatClient({ sleep: async () => {} });

export function narrowTask(task: Task): number {
  if (task.type === "confirmed-steps") return task.connectedIntegrationNames.length;
  return task.permissions.length;
}
