/** ChatClient behind a real proxy (the `proxy` option and the environment), and while the assistant is slow. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  ChatClient,
  ChatConnectionError,
  ChatTimeoutError,
  DEFAULT_WAIT_TIMEOUT_MS,
} from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import {
  needsOpenssl,
  PROXY_PASSWORD,
  type ProxiedService,
  startProxiedService,
} from "./fixtures/proxied-service.js";

let service: ProxiedService;
let token: string;
beforeAll(async () => {
  if (needsOpenssl.skip) return;
  service = await startProxiedService();
  token = service.server.apiKeys.personal as string;
});
afterAll(() => service?.close());

const savedEnv = { ...process.env };
afterEach(() => {
  for (const name of ["HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"]) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
});

describe("ChatClient through the proxy", needsOpenssl, () => {
  it("the proxy option carries every call, with the credentials, to a host only the proxy resolves", async () => {
    const before = service.proxyLog().length;
    const client = new ChatClient({ baseUrl: service.httpUrl, token, proxy: service.proxyUrl });
    const chat = await client.createChat({ message: "hello through the proxy" });
    expect((await client.getChat(chat.id)).id).toBe(chat.id);
    await expect.poll(() => service.proxyLog().length - before).toBeGreaterThanOrEqual(1);
    expect(
      service
        .proxyLog()
        .slice(before)
        .every((line) => line.credentials === "right"),
    ).toBe(true);
  });

  it("HTTP_PROXY from the environment is used by default; proxy: false and NO_PROXY go direct (and fail here)", async () => {
    process.env.HTTP_PROXY = service.proxyUrl;
    const viaEnv = new ChatClient({ baseUrl: service.httpUrl, token, maxRetries: 0 });
    expect((await viaEnv.listChats({ limit: 1 })).object).toBe("list");

    const before = service.proxyLog().length;
    const off = new ChatClient({ baseUrl: service.httpUrl, token, maxRetries: 0, proxy: false });
    expect((await off.listChats().catch((error: unknown) => error)) as Error).toBeInstanceOf(
      ChatConnectionError,
    );
    process.env.NO_PROXY = "chat.test";
    const bypassed = new ChatClient({ baseUrl: service.httpUrl, token, maxRetries: 0 });
    expect(((await bypassed.listChats().catch((error: unknown) => error)) as Error).message).toMatch(
      /ENOTFOUND|EAI_AGAIN/,
    );
    expect(service.proxyLog().length).toBe(before);
  });

  it("a 407 is a ChatConnectionError naming the proxy, sent once (not retried), without the password", async () => {
    const before = service.proxyLog().length;
    const client = new ChatClient({
      baseUrl: service.httpUrl,
      token,
      proxy: service.proxyUrl.replace(PROXY_PASSWORD, "wrong-password"),
    });
    const error = (await client.listChats().catch((error: unknown) => error)) as Error;
    expect(error).toBeInstanceOf(ChatConnectionError);
    expect(error.message).toContain(`The proxy ${service.proxyDisplay} (from proxy option) refused`);
    expect(error.message).toContain("407");
    expect(error.message).not.toContain("wrong-password");
    // A later request with no credentials marks the end: the proxy logs requests in the order it gets them, so
    // a retry of the refused one would show before it.
    const marker = new ChatClient({
      baseUrl: service.httpUrl,
      token,
      proxy: service.proxyDisplay,
      maxRetries: 0,
    });
    await marker.listChats().catch(() => undefined);
    await expect
      .poll(() => service.proxyLog().slice(before))
      .toContainEqual(expect.objectContaining({ credentials: "none" }));
    const seen = service.proxyLog().slice(before);
    const refused = seen.slice(
      0,
      seen.findIndex((line) => line.credentials === "none"),
    );
    expect(refused).toEqual([expect.objectContaining({ credentials: "wrong" })]);
  });

  it("an https service whose certificate this process does not trust: the NODE_EXTRA_CA_CERTS hint, no retry", async () => {
    const client = new ChatClient({ baseUrl: service.httpsUrl, token, proxy: service.proxyUrl });
    const error = (await client.listChats().catch((error: unknown) => error)) as Error;
    expect(error).toBeInstanceOf(ChatConnectionError);
    expect(error.message).toContain(
      `The TLS certificate of ${new URL(service.httpsUrl).host} is not trusted`,
    );
    expect(error.message).toContain("NODE_EXTRA_CA_CERTS");
  });
});

describe("a slow assistant", () => {
  /** Stands for an assistant that takes minutes, against a read timeout of 60 s: both scaled down. */
  const ASSISTANT_DELAY_MS = 1500;
  const READ_TIMEOUT_MS = 500;
  let slow: ReferenceServer;
  beforeAll(async () => {
    slow = await startReferenceServer({ assistantDelayMs: ASSISTANT_DELAY_MS });
  });
  afterAll(() => slow?.close());

  it("create, send and resolve wait past the read timeout (10 minutes by default) and complete", async () => {
    const client = new ChatClient({
      baseUrl: slow.url,
      token: slow.apiKeys.personal,
      timeoutMs: READ_TIMEOUT_MS,
    });
    expect(client.waitTimeoutMs).toBe(DEFAULT_WAIT_TIMEOUT_MS);
    const chat = await client.createChat({ message: "Add a database" });
    const reply = await client.confirmIntegrations(chat.id);
    expect(reply.role).toBe("assistant");
    expect((await client.sendMessage(chat.id, { message: "thanks" })).role).toBe("assistant");
  }, 20_000);

  it("a shorter timeout for one call ends it with ChatTimeoutError saying the request may still complete", async () => {
    // No retries: a keyed create whose attempt timed out is sent again with its key (and may then get the chat
    // the first attempt made), so only a single attempt ends in the time-out itself.
    const client = new ChatClient({ baseUrl: slow.url, token: slow.apiKeys.personal, maxRetries: 0 });
    const error = await client
      .createChat({ message: "impatient" }, { timeoutMs: 300 })
      .catch((error: Error) => error);
    expect(error).toBeInstanceOf(ChatTimeoutError);
    expect(error.message).toContain("POST /v2/chats timed out after 300 ms");
    expect(error.message).toContain("may still complete");
    // Not sent twice: once the assistant has answered, exactly one such chat exists.
    await new Promise((resolve) => setTimeout(resolve, ASSISTANT_DELAY_MS + 300));
    const titles = (await client.listChats({ limit: 100 })).data.map((chat) => chat.title);
    expect(titles.filter((title) => title === "impatient")).toHaveLength(1);
  }, 20_000);
});
