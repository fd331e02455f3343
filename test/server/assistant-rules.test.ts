/** The scripted assistant's rules table (the listening server's lifecycle is in listening-server.test.ts). */
import { describe, expect, it } from "vitest";
import { ASSISTANT_RULES, type AssistantRule, ScriptedAssistant } from "../../src/server/index.js";
import { pendingTaskOf } from "../../src/wire/index.js";

describe("Scripted assistant: a rules table that is easy to extend", () => {
  it("a new row adds a flow with its own integrations and script", () => {
    const storage: AssistantRule = {
      name: "storage",
      matches: (text) => /bucket/i.test(text),
      integrations: ["S3", "CloudFront"],
      script: "/scripts/setup-bucket.sh",
      say: { done: () => "Bucket ready." },
    };
    const assistant = new ScriptedAssistant([storage, ...ASSISTANT_RULES]);
    const ask = assistant.reply("Create a bucket");
    expect(ask.finishReason).toBe("tool-calls");
    expect(ask.parts).toContainEqual(
      expect.objectContaining({
        data: { requestedIntegrations: ["S3", "CloudFront"], requestedMcpPresets: [] },
      }),
    );
    const permission = assistant.integrationsConnected(ask.pause!);
    expect(permission.parts).toContainEqual(
      expect.objectContaining({
        type: "tool-call",
        suggestedPermissions: [
          expect.objectContaining({
            input: expect.objectContaining({ executeScript: "/scripts/setup-bucket.sh" }),
          }),
        ],
      }),
    );
    expect(assistant.permissionsApproved(permission.pause!).content).toBe("Bucket ready.");
  });

  it("is deterministic: the same message gets the same answer", () => {
    const assistant = new ScriptedAssistant();
    expect(assistant.reply("hello world")).toEqual(assistant.reply("hello world"));
    expect(pendingTaskOf({ role: "assistant", ...assistant.reply("DataBase please") } as never)?.kind).toBe(
      "integration",
    );
  });
});
