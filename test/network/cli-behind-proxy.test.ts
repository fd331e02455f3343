/** chat-cli on a laptop behind a company proxy and TLS root, through a real proxy to the reference server. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, jsonOf, runCli } from "../cli/helpers.js";
import {
  needsOpenssl,
  PROXY_PASSWORD,
  PROXY_USER,
  type ProxiedService,
  startProxiedService,
} from "./fixtures/proxied-service.js";

let service: ProxiedService;
beforeAll(async () => {
  if (needsOpenssl.skip) return;
  service = await startProxiedService();
});
afterAll(() => service?.close());

function envWith(extra: Record<string, string>) {
  return cleanEnv({
    CHAT_API_URL: service.httpsUrl,
    CHAT_API_KEY: service.server.apiKeys.personal,
    ...extra,
  });
}

describe("chat-cli through the proxy with NODE_EXTRA_CA_CERTS", needsOpenssl, () => {
  it("creates and lists chats; the proxy saw the credentials", async () => {
    const before = service.proxyLog().length;
    const env = envWith({ HTTPS_PROXY: service.proxyUrl, NODE_EXTRA_CA_CERTS: service.caFile });
    const created = await runCli(["create", "--json", "hello through the proxy"], { env });
    expect(created.code, created.stderr).toBe(0);
    const listed = await runCli(["list", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect((jsonOf(listed) as { data: { id: string }[] }).data.map((chat) => chat.id)).toContain(
      (jsonOf(created) as { id: string }).id,
    );
    const seen = service.proxyLog().slice(before);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(
      seen.every((line) => line.credentials === "right" && line.target === new URL(service.httpsUrl).host),
    ).toBe(true);
  });

  it("--debug says which proxy the URL uses, without the credentials", async () => {
    const result = await runCli(["--debug", "list"], {
      env: envWith({ HTTPS_PROXY: service.proxyUrl, NODE_EXTRA_CA_CERTS: service.caFile }),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`via proxy ${service.proxyDisplay} (from HTTPS_PROXY)`);
    expect(result.stderr).not.toContain(PROXY_PASSWORD);
    expect(result.stderr).not.toContain(PROXY_USER);
  });
});

describe("the errors a user can act on", needsOpenssl, () => {
  it("without the company root: the certificate error names the host and NODE_EXTRA_CA_CERTS", async () => {
    const result = await runCli(["list"], { env: envWith({ HTTPS_PROXY: service.proxyUrl }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `The TLS certificate of ${new URL(service.httpsUrl).host} is not trusted`,
    );
    expect(result.stderr).toContain("NODE_EXTRA_CA_CERTS");
  });

  it("a wrong proxy password: the 407 names the proxy and the variable, never the password", async () => {
    const wrong = service.proxyUrl.replace(PROXY_PASSWORD, "wrong-password");
    const result = await runCli(["--debug", "list"], {
      env: envWith({ HTTPS_PROXY: wrong, NODE_EXTRA_CA_CERTS: service.caFile }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The proxy ${service.proxyDisplay} (from HTTPS_PROXY) refused`);
    expect(result.stderr).toContain("407");
    expect(result.stderr).not.toContain("wrong-password");
  });

  it("NO_PROXY goes direct, where chat.test does not resolve; the proxy sees nothing", async () => {
    const before = service.proxyLog().length;
    const result = await runCli(["list"], {
      env: envWith({ HTTPS_PROXY: service.proxyUrl, NO_PROXY: ".test", NODE_EXTRA_CA_CERTS: service.caFile }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/ENOTFOUND|EAI_AGAIN|chat\.test/);
    expect(service.proxyLog().length).toBe(before);
  });
});
