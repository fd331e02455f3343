/** The pause rules (docs/reference-server.md) through /v2 on a real socket, one describe per table row. */
import { describe, expect, it } from "vitest";
import { type Message, pendingTaskOf } from "../../src/wire/index.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";
import { apiFor, DATABASE_PROMPT } from "./helpers.js";

const ctx = useRequestableReferenceServer();
const api = () => apiFor(ctx.server, "acme");

async function latestMessage(chatId: string): Promise<Message> {
  return (await api().get(`/v2/chats/${chatId}/messages?limit=1`)).body.data[0];
}

/** A chat paused on the integration request. */
async function pausedOnIntegration(): Promise<string> {
  const chat = (await api().post("/v2/chats", { message: DATABASE_PROMPT })).body;
  return chat.id;
}

/** A chat paused on the script permission; returns its id and the pending permissions. */
async function pausedOnPermission() {
  const chatId = await pausedOnIntegration();
  const reply = await api().post(`/v2/chats/${chatId}/messages/resolve`, {
    task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] },
  });
  const pending = pendingTaskOf(reply.body);
  if (pending?.kind !== "permissions") throw new Error("expected a permission pause");
  return { chatId, permissions: pending.permissions };
}

const resolve = (chatId: string, task: unknown) =>
  api().post(`/v2/chats/${chatId}/messages/resolve`, { task });

describe("Chat running -> assistant needs an integration: chat pauses on get_or_request_integration", () => {
  it("a message mentioning database (any case) asks for Neon with prose content", async () => {
    const chatId = await pausedOnIntegration();
    const latest = await latestMessage(chatId);
    expect(latest.role).toBe("assistant");
    expect(latest.finishReason).toBe("tool-calls");
    expect(latest.content).toMatch(/Neon/);
    expect(latest.parts).toContainEqual({
      type: "agent-action",
      name: "get_or_request_integration",
      data: { requestedIntegrations: ["Neon"], requestedMcpPresets: [] },
    });
    expect(latest.parts).toContainEqual({ type: "text", text: latest.content });
  });

  it("a message with no such need gets a plain stop reply", async () => {
    const chat = (await api().post("/v2/chats", { message: "Tell me a joke" })).body;
    const latest = await latestMessage(chat.id);
    expect(latest.finishReason).toBe("stop");
    expect(pendingTaskOf(latest)).toBeNull();
  });
});

describe("Full integration flow: create -> integration pause -> confirmed-steps -> permission pause -> confirmed-permissions -> stop", () => {
  it("runs to a final stop reply", async () => {
    const chatId = await pausedOnIntegration();
    const afterSteps = await resolve(chatId, {
      type: "confirmed-steps",
      connectedIntegrationNames: ["Neon"],
    });
    expect(afterSteps.status).toBe(200);
    expect(afterSteps.body.finishReason).toBe("tool-calls");
    const toolCall = afterSteps.body.parts.find((part: { type: string }) => part.type === "tool-call");
    expect(toolCall.suggestedPermissions).toEqual([
      {
        type: "ALLOW_DYNAMIC_TOOL_STRICT",
        toolName: "SystemAction",
        input: { systemAction: "executeScript", executeScript: "/scripts/setup-db.sql" },
      },
    ]);
    const afterPermissions = await resolve(chatId, {
      type: "confirmed-permissions",
      permissions: toolCall.suggestedPermissions,
    });
    expect(afterPermissions.status).toBe(200);
    expect(afterPermissions.body.role).toBe("assistant");
    expect(afterPermissions.body.finishReason).toBe("stop");
    expect((await latestMessage(chatId)).id).toBe(afterPermissions.body.id);
  });

  it("accepts the requested names in any order and permissions with keys in any order", async () => {
    const { chatId, permissions } = await pausedOnPermission();
    const [permission] = permissions;
    const reordered = {
      input: { executeScript: permission!.input.executeScript, systemAction: "executeScript" },
      toolName: "SystemAction",
      type: permission!.type,
    };
    const reply = await resolve(chatId, { type: "confirmed-permissions", permissions: [reordered] });
    expect(reply.status).toBe(200);
    expect(reply.body.finishReason).toBe("stop");
  });
});

describe("Paused on integration request -> confirmed-steps with empty connectedIntegrationNames: request rejected", () => {
  it("the assistant goes on without the integration with a stop reply", async () => {
    const chatId = await pausedOnIntegration();
    const reply = await resolve(chatId, { type: "confirmed-steps", connectedIntegrationNames: [] });
    expect(reply.status).toBe(200);
    expect(reply.body.finishReason).toBe("stop");
    expect(pendingTaskOf(reply.body)).toBeNull();
    const again = await resolve(chatId, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] });
    expect(again.status).toBe(409);
  });
});

describe("Paused on script permission -> any other follow-up message: permission request rejected", () => {
  it("the follow-up is answered normally and the old permission can no longer be approved", async () => {
    const { chatId, permissions } = await pausedOnPermission();
    const reply = await api().post(`/v2/chats/${chatId}/messages`, {
      message: "never mind, what time is it?",
    });
    expect(reply.status).toBe(200);
    expect(reply.body.finishReason).toBe("stop");
    const late = await resolve(chatId, { type: "confirmed-permissions", permissions });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("conflict");
  });

  it("a follow-up also rejects a pending integration request", async () => {
    const chatId = await pausedOnIntegration();
    await api().post(`/v2/chats/${chatId}/messages`, { message: "skip that" });
    const late = await resolve(chatId, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] });
    expect(late.status).toBe(409);
  });
});

describe("Resolve targets an older task or a mismatch: 409 conflict", () => {
  it("the chat is not blocked any more (never paused)", async () => {
    const chat = (await api().post("/v2/chats", { message: "hello" })).body;
    const reply = await resolve(chat.id, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] });
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: "conflict", message: expect.any(String) });
  });

  it("the chat has moved on past the integration pause (resolving it twice)", async () => {
    const chatId = await pausedOnIntegration();
    await resolve(chatId, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] });
    const replay = await resolve(chatId, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] });
    expect(replay.status).toBe(409);
  });

  it("the chat has moved on past the permission pause (approving twice)", async () => {
    const { chatId, permissions } = await pausedOnPermission();
    expect((await resolve(chatId, { type: "confirmed-permissions", permissions })).status).toBe(200);
    expect((await resolve(chatId, { type: "confirmed-permissions", permissions })).status).toBe(409);
  });

  it("other task type: confirmed-permissions while the integration is pending", async () => {
    const chatId = await pausedOnIntegration();
    const { permissions } = await pausedOnPermission();
    const reply = await resolve(chatId, { type: "confirmed-permissions", permissions });
    expect(reply.status).toBe(409);
  });

  it("other task type: confirmed-steps while a permission is pending", async () => {
    const { chatId } = await pausedOnPermission();
    const reply = await resolve(chatId, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] });
    expect(reply.status).toBe(409);
  });

  it("other task type: an unknown task type", async () => {
    const chatId = await pausedOnIntegration();
    const reply = await resolve(chatId, { type: "answered-question", answer: "yes" });
    expect(reply.status).toBe(409);
  });

  it("other names than the requested ones", async () => {
    const chatId = await pausedOnIntegration();
    for (const names of [["Supabase"], ["Neon", "Supabase"], ["neon"]]) {
      const reply = await resolve(chatId, { type: "confirmed-steps", connectedIntegrationNames: names });
      expect(reply.status).toBe(409);
    }
    expect(pendingTaskOf(await latestMessage(chatId))?.kind).toBe("integration");
  });

  it("other permissions than the pending ones", async () => {
    const { chatId, permissions } = await pausedOnPermission();
    const [permission] = permissions;
    const altered = {
      ...permission,
      input: { ...permission!.input, executeScript: "/scripts/drop-all.sql" },
    };
    const candidates = [[altered], [permission, permission], [{ ...permission, extra: "field" }]];
    for (const candidate of candidates) {
      const reply = await resolve(chatId, { type: "confirmed-permissions", permissions: candidate });
      expect(reply.status).toBe(409);
    }
    expect(pendingTaskOf(await latestMessage(chatId))?.kind).toBe("permissions");
  });
});

describe("confirmed-permissions with an empty list: 422 unprocessable", () => {
  it("is refused and leaves the pause in place", async () => {
    const { chatId } = await pausedOnPermission();
    const reply = await resolve(chatId, { type: "confirmed-permissions", permissions: [] });
    expect(reply.status).toBe(422);
    expect(reply.body.error.code).toBe("unprocessable");
    expect(pendingTaskOf(await latestMessage(chatId))?.kind).toBe("permissions");
  });
});

describe("Malformed task: 400 bad_request", () => {
  const malformed: Array<[string, unknown]> = [
    ["no task", {}],
    ["task without type", { task: { connectedIntegrationNames: ["Neon"] } }],
    ["confirmed-steps without names", { task: { type: "confirmed-steps" } }],
    ["names not strings", { task: { type: "confirmed-steps", connectedIntegrationNames: [1] } }],
    ["permissions not an array", { task: { type: "confirmed-permissions", permissions: "all" } }],
    [
      "permission missing toolName",
      { task: { type: "confirmed-permissions", permissions: [{ type: "X", input: {} }] } },
    ],
    ["task is a string", { task: "confirmed-steps" }],
  ];
  for (const [name, body] of malformed) {
    it(name, async () => {
      const chatId = await pausedOnIntegration();
      const reply = await api().post(`/v2/chats/${chatId}/messages/resolve`, body);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe("bad_request");
    });
  }
});
