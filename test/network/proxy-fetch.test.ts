/** The proxy seam under fetch and node:http, against a real proxy in front of the reference server as `chat.test`. */
import { createServer, request as httpRequest, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNetworkFailure } from "../../src/internal/network-errors.js";
import {
  ProxyError,
  proxyAgent,
  proxyAwareFetch,
  resolveProxy,
  watchProxyConnect,
} from "../../src/internal/proxy.js";
import {
  needsOpenssl,
  PROXY_PASSWORD,
  type ProxiedService,
  startProxiedService,
} from "./fixtures/proxied-service.js";

let service: ProxiedService;
let apiKey: string;

beforeAll(async () => {
  if (needsOpenssl.skip) return;
  service = await startProxiedService();
  apiKey = service.server.apiKeys.personal as string;
});
afterAll(() => service?.close());

describe(
  "fetch through the proxy (undici's ProxyAgent as the dispatcher of the platform fetch)",
  needsOpenssl,
  () => {
    it("a host only the proxy resolves fails direct and answers through the proxy, with the credentials sent", async () => {
      const direct = (await fetch(`${service.httpUrl}/v2/chats`).catch((error: unknown) => error)) as Error;
      expect((direct.cause as { code?: string }).code).toMatch(/ENOTFOUND|EAI_AGAIN/);

      const before = service.proxyLog().length;
      const proxied = proxyAwareFetch({ env: { HTTP_PROXY: service.proxyUrl } });
      const response = await proxied(`${service.httpUrl}/v2/chats`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { object: string }).object).toBe("list");
      await expect
        .poll(() => service.proxyLog().slice(before))
        .toContainEqual({
          method: "CONNECT",
          target: new URL(service.httpUrl).host,
          credentials: "right",
        });
    });

    it("NO_PROXY sends the request direct (which cannot resolve chat.test), the proxy sees nothing", async () => {
      const before = service.proxyLog().length;
      const proxied = proxyAwareFetch({ env: { HTTP_PROXY: service.proxyUrl, NO_PROXY: ".test" } });
      const error = (await proxied(`${service.httpUrl}/v2/chats`).catch((error: unknown) => error)) as Error;
      expect((error.cause as { code?: string }).code).toMatch(/ENOTFOUND|EAI_AGAIN/);
      expect(service.proxyLog().length).toBe(before);
    });

    it("a wrong password: a 407 error naming the proxy and the variable, without the credentials", async () => {
      const wrong = service.proxyUrl.replace(PROXY_PASSWORD, "not-it");
      const proxied = proxyAwareFetch({ env: { http_proxy: wrong } });
      const error = (await proxied(`${service.httpUrl}/v2/chats`).catch((error: unknown) => error)) as Error;
      expect(error).toBeInstanceOf(TypeError);
      expect(error.cause).toBeInstanceOf(ProxyError);
      const message = describeNetworkFailure(error, service.httpUrl) ?? "";
      expect(message).toContain(`The proxy ${service.proxyDisplay} (from http_proxy) refused`);
      expect(message).toContain("407");
      expect(message).toContain("user name and password in http_proxy");
      expect(message).not.toMatch(/not-it|laptop-user/);
      await expect.poll(() => service.proxyLog().at(-1)?.credentials).toBe("wrong");
    });

    it("a proxy that is not listening: 'Could not connect to the proxy', naming it", async () => {
      const error = await proxyAwareFetch({ env: { HTTPS_PROXY: "http://u:pw@127.0.0.1:9" } })(
        "https://chat.test/v2/chats",
      ).catch((error: Error) => error);
      expect(describeNetworkFailure(error, "https://chat.test")).toMatch(
        /^Could not connect to the proxy http:\/\/127\.0\.0\.1:9 \(from HTTPS_PROXY\): connection refused \(ECONNREFUSED\)\. Check HTTPS_PROXY/,
      );
    });

    it("a TLS front with a certificate from a CA this process does not trust: the NODE_EXTRA_CA_CERTS hint", async () => {
      const error = await proxyAwareFetch({ env: { HTTPS_PROXY: service.proxyUrl } })(
        `${service.httpsUrl}/v2/chats`,
      ).catch((error: Error) => error);
      const message = describeNetworkFailure(error, service.httpsUrl) ?? "";
      expect(message).toContain(`The TLS certificate of ${new URL(service.httpsUrl).host} is not trusted`);
      expect(message).toContain("NODE_EXTRA_CA_CERTS");
    });
  },
);

describe("node:http through the proxy (https-proxy-agent)", needsOpenssl, () => {
  function get(url: string, proxy: string): Promise<{ status: number; body: string }> {
    const target = new URL(url);
    const choice = resolveProxy(target, { proxy }).proxy;
    if (!choice) throw new Error("expected a proxy");
    return proxyAgent(choice).then(
      (agent) =>
        new Promise((resolve, reject) => {
          const outgoing = httpRequest(target, { agent, headers: { authorization: `Bearer ${apiKey}` } });
          watchProxyConnect(outgoing, choice, target);
          outgoing.on("error", reject);
          outgoing.on("response", (response) => {
            let body = "";
            response.setEncoding("utf8").on("data", (chunk: string) => {
              body += chunk;
            });
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
          });
          outgoing.end();
        }),
    );
  }

  it("answers through the CONNECT tunnel", async () => {
    const answer = await get(`${service.httpUrl}/v2/chats`, service.proxyUrl);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).object).toBe("list");
  });

  it("a refused CONNECT fails the request with the proxy's error, not the proxy's page as the server's answer", async () => {
    const error = await get(
      `${service.httpUrl}/v2/chats`,
      service.proxyUrl.replace(PROXY_PASSWORD, "x"),
    ).catch((error: Error) => error);
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).status).toBe(407);
  });
});

describe("a proxy that forbids the destination (CONNECT 403)", () => {
  let forbidding: Server;
  let proxy: string;
  beforeAll(async () => {
    forbidding = createServer();
    forbidding.on("connect", (_request, socket) => {
      socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    await new Promise<void>((resolve) => forbidding.listen(0, "127.0.0.1", resolve));
    proxy = `http://127.0.0.1:${(forbidding.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((resolve) => forbidding.close(resolve)));

  it("fetch: says the proxy does not allow the host and suggests NO_PROXY", async () => {
    const error = await proxyAwareFetch({ proxy })("https://blocked.test/v2/chats").catch(
      (error: Error) => error,
    );
    expect(describeNetworkFailure(error, "https://blocked.test")).toBe(
      `The proxy ${proxy} (from proxy option) refused the connection to blocked.test:443: 403. ` +
        "The proxy does not allow blocked.test:443: ask its administrator, or add the host to NO_PROXY if it is reachable directly.",
    );
  });
});
