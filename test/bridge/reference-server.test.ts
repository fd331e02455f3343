/** End to end: the bridge process signs in to the reference server with OAuth and relays the chat tools. */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import {
  findIntegrationRequest,
  findPendingPermissions,
  type Message,
  MessageSchema,
  type Permission,
} from "../../src/wire/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import { BRIDGE_BIN, type BridgeClient, connectThroughBridge } from "./fixtures/spawn-bridge.js";

const browserScript = resolve(import.meta.dirname, "../auth/fixtures/http-browser.mjs");
const ACCESS_TOKEN_TTL_SECONDS = 3;

/** A config dir and a browser log of its own: each line of the log is one authorization opened. */
function newUserHome() {
  const dir = scratchDir("cmb-bridge-e2e-");
  const browserLog = join(dir, "browser.log");
  writeFileSync(browserLog, "");
  return {
    dir,
    env: {
      CHAT_CONFIG_DIR: join(dir, "config"),
      BROWSER: `${process.execPath} ${browserScript}`,
      HTTP_BROWSER_LOG: browserLog,
    },
    authorizations: () => readFileSync(browserLog, "utf8").split("\n").filter(Boolean).length,
    /** Token strings held in the file store. */
    storedSecrets: () => {
      const secrets: string[] = [];
      const authDir = join(dir, "config", "auth");
      for (const name of readdirSync(authDir).filter((file) => file.endsWith(".json"))) {
        JSON.stringify(JSON.parse(readFileSync(join(authDir, name), "utf8")), (key, value) => {
          if (typeof value === "string" && /token|secret/i.test(key) && value.length >= 8)
            secrets.push(value);
          return value;
        });
      }
      return secrets;
    },
  };
}

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({
    port: 0,
    autoApprove: "acme",
    accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
  });
});
afterAll(async () => {
  await server?.close();
});

const bridgeArgs = () => ["--token-store", "file", "--auth-timeout", "20", server.mcpUrl];

async function call<T = Record<string, unknown>>(
  bridge: BridgeClient,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const result = await bridge.client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
}

describe("first run signs in once and relays the whole integration flow", () => {
  const home = newUserHome();

  it("signs in through the browser, then drives a chat through both pauses with the seven tools", async () => {
    const bridge = await connectThroughBridge(["--debug", ...bridgeArgs()], { env: home.env });
    try {
      const { tools } = await bridge.client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        [
          "create_chat",
          "get_chat",
          "get_preview",
          "list_chats",
          "list_messages",
          "resolve_task",
          "send_message",
        ].sort(),
      );
      const chat = await call<{ id: string; url: string }>(bridge, "create_chat", {
        message: "Please set up a Database",
      });
      const latestAssistant = async (): Promise<Message> => {
        const page = await call<{ data: unknown[] }>(bridge, "list_messages", { chatId: chat.id, limit: 10 });
        const messages = page.data.map((item) => MessageSchema.parse(item));
        return messages.find((message) => message.role === "assistant")!;
      };

      const paused = await latestAssistant();
      expect(paused.finishReason).toBe("tool-calls");
      const request = findIntegrationRequest(paused);
      expect(request?.integrations).toEqual(["Neon"]);

      const afterSteps = MessageSchema.parse(
        await call(bridge, "resolve_task", {
          chatId: chat.id,
          task: { type: "confirmed-steps", connectedIntegrationNames: request!.integrations },
        }),
      );
      const permissions = findPendingPermissions(afterSteps) as Permission[];
      expect(permissions[0]?.input.executeScript).toBe("/scripts/setup-db.sql");

      const done = MessageSchema.parse(
        await call(bridge, "resolve_task", {
          chatId: chat.id,
          task: { type: "confirmed-permissions", permissions },
        }),
      );
      expect(done.finishReason).toBe("stop");

      const reply = MessageSchema.parse(
        await call(bridge, "send_message", { chatId: chat.id, message: "Thanks!" }),
      );
      expect(reply.finishReason).toBe("stop");
      expect((await call<{ url: string }>(bridge, "get_chat", { chatId: chat.id })).url).toBe(chat.url);
      const listed = await call<{ data: { id: string }[] }>(bridge, "list_chats", { topic: "database" });
      expect(listed.data.map((item) => item.id)).toContain(chat.id);
      expect(await call(bridge, "get_preview", { chatId: chat.id })).toMatchObject({
        object: "preview",
        chatId: chat.id,
      });
    } finally {
      await bridge.close();
    }
    expect(home.authorizations()).toBe(1);
    const secrets = home.storedSecrets();
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(bridge.stderr()).not.toContain(secret);
  });

  it("keeps the tokens in 0600 files inside a 0700 directory", () => {
    const authDir = join(home.dir, "config", "auth");
    expect(statSync(authDir).mode & 0o777).toBe(0o700);
    const files = readdirSync(authDir).filter((file) => file.endsWith(".json"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(statSync(join(authDir, file)).mode & 0o777).toBe(0o600);
  });

  it("reuses the stored tokens on a second run without opening the browser", async () => {
    const bridge = await connectThroughBridge(bridgeArgs(), { env: home.env });
    try {
      const page = await call<{ object: string }>(bridge, "list_chats", {});
      expect(page.object).toBe("list");
    } finally {
      await bridge.close();
    }
    expect(home.authorizations()).toBe(1);
  });
});

describe("the access token expires mid-session", () => {
  it("refreshes and goes on without another sign-in", async () => {
    const home = newUserHome();
    const bridge = await connectThroughBridge(bridgeArgs(), { env: home.env });
    try {
      await call(bridge, "list_chats", {});
      await new Promise((done) => setTimeout(done, (ACCESS_TOKEN_TTL_SECONDS + 1) * 1000));
      expect((await call<{ object: string }>(bridge, "list_chats", {})).object).toBe("list");
    } finally {
      await bridge.close();
    }
    expect(home.authorizations()).toBe(1);
  });
});

describe("the server refuses an expired access token, and a refresh renews it", () => {
  it("says nothing about it at info level (no sign-in happened)", async () => {
    const home = newUserHome();
    const bridge = await connectThroughBridge(bridgeArgs(), { env: home.env });
    try {
      await call(bridge, "list_chats", {});
      const before = bridge.stderr().length;
      // The bridge reuses a token for 5 s, longer than it lives here: the next call meets a 401.
      await new Promise((done) => setTimeout(done, (ACCESS_TOKEN_TTL_SECONDS + 1) * 1000));
      expect((await call<{ object: string }>(bridge, "list_chats", {})).object).toBe("list");
      expect(bridge.stderr().slice(before)).not.toMatch(
        /refreshing or signing in|Another process is signing in/,
      );
    } finally {
      await bridge.close();
    }
    expect(home.authorizations()).toBe(1);
  });
});

describe("three bridges start together with no tokens", () => {
  it("opens exactly one authorization and all three sessions work", async () => {
    const home = newUserHome();
    const bridges = await Promise.all(
      [1, 2, 3].map(() => connectThroughBridge(bridgeArgs(), { env: home.env })),
    );
    try {
      const pages = await Promise.all(
        bridges.map((bridge) => call<{ object: string }>(bridge, "list_chats", {})),
      );
      expect(pages.map((page) => page.object)).toEqual(["list", "list", "list"]);
    } finally {
      await Promise.all(bridges.map((bridge) => bridge.close()));
    }
    expect(home.authorizations()).toBe(1);
  });
});

describe("the refresh token is revoked", () => {
  it("signs in once more in the browser and goes on with the same session", async () => {
    const home = newUserHome();
    const bridge = await connectThroughBridge(bridgeArgs(), { env: home.env });
    try {
      await call(bridge, "list_chats", {});
      const authDir = join(home.dir, "config", "auth");
      const loginFile = readdirSync(authDir).find(
        (file) => file.endsWith(".json") && !file.includes("keychain"),
      )!;
      const login = JSON.parse(readFileSync(join(authDir, loginFile), "utf8")) as {
        tokens: { accessToken: string; refreshToken: string };
        client: { client_id: string; client_secret?: string };
      };
      for (const token of [login.tokens.refreshToken, login.tokens.accessToken]) {
        const body = new URLSearchParams({ token, client_id: login.client.client_id });
        if (login.client.client_secret) body.set("client_secret", login.client.client_secret);
        const revoked = await fetch(`${server.url}/revoke`, { method: "POST", body });
        expect(revoked.status).toBe(200);
      }
      await new Promise((done) => setTimeout(done, (ACCESS_TOKEN_TTL_SECONDS + 1) * 1000));
      expect((await call<{ object: string }>(bridge, "list_chats", {})).object).toBe("list");
    } finally {
      await bridge.close();
    }
    expect(home.authorizations()).toBe(2);
  });
});

describe("the server restarts with its data file", () => {
  it("opens a new session with the stored tokens, invisibly to the client", async () => {
    const home = newUserHome();
    const dataFile = join(home.dir, "server-data.json");
    let restartable = await startReferenceServer({ port: 0, autoApprove: "acme", dataFile });
    const port = Number(new URL(restartable.url).port);
    const bridge = await connectThroughBridge(["--token-store", "file", restartable.mcpUrl], {
      env: home.env,
    });
    try {
      const chat = await call<{ id: string }>(bridge, "create_chat", { message: "Hello there" });
      await restartable.close();
      restartable = await startReferenceServer({ port, autoApprove: "acme", dataFile });
      expect((await call<{ id: string }>(bridge, "get_chat", { chatId: chat.id })).id).toBe(chat.id);
    } finally {
      await bridge.close();
      await restartable.close();
    }
    expect(home.authorizations()).toBe(1);
  });
});

describe("chat-mcp-bridge login and logout", () => {
  const runBin = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string; stdout: string }>((done) => {
      execFile(
        process.execPath,
        [BRIDGE_BIN, ...args],
        { env: { PATH: process.env.PATH ?? "", ...env } },
        (error, stdout, stderr) =>
          done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  it("signs in ahead of time, so the relay starts without a browser; logout forgets the tokens", async () => {
    const home = newUserHome();
    const login = await runBin(["login", ...bridgeArgs()], home.env);
    expect(login.code).toBe(0);
    expect(login.stdout).toBe("");
    expect(login.stderr).toMatch(/signed in/);
    expect(home.authorizations()).toBe(1);

    const bridge = await connectThroughBridge(bridgeArgs(), { env: home.env });
    try {
      expect((await call<{ object: string }>(bridge, "list_chats", {})).object).toBe("list");
    } finally {
      await bridge.close();
    }
    expect(home.authorizations()).toBe(1);

    const logout = await runBin(["logout", "--token-store", "file", server.mcpUrl], home.env);
    expect(logout.code).toBe(0);
    expect(logout.stderr).toMatch(/signed out/);
    expect(home.storedSecrets()).toEqual([]);
  });
});
