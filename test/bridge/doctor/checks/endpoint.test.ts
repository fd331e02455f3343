/** doctor pointed at some other web server (in process): the endpoint check says it does not look like the chat service, with the URL. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../../../support/scratch-dir.js";
import { handlerFetch, IN_PROCESS_ORIGIN } from "../../fixtures/fetch-endpoint.js";
import { checkOf, runDoctorArgs } from "../fixtures/doctor-command.js";

// A web app that fails every POST with its HTML error page (a dev server, say).
const site = handlerFetch(
  async () =>
    new Response("<html><body><h1>Internal Server Error</h1></body></html>", {
      status: 500,
      headers: { "content-type": "text/html" },
    }),
);
const siteUrl = `${IN_PROCESS_ORIGIN}/mcp`;

describe("doctor against an unrelated web server", () => {
  it("the endpoint check fails with 'does not look like the chat service' and a fix to check the URL", async () => {
    const home = scratchDir("cmb-doctor-site-");
    const env = { PATH: process.env.PATH ?? "", HOME: home, CHAT_CONFIG_DIR: join(home, "config") };
    const report = await runDoctorArgs(["--token-store", "file", siteUrl], env, () => {}, { fetch: site });
    const endpoint = report.checks.find((check) => check.id === "endpoint");
    expect(endpoint?.status).toBe("fail");
    expect(endpoint?.detail).toContain(`the server at ${siteUrl} does not look like the chat service`);
    expect(endpoint?.fix).not.toMatch(/try again later/);
    expect(endpoint?.fix).toMatch(/check the URL/);
  });
});

describe("doctor given a fetch as its network", () => {
  it("sends its requests through it, and the DNS and TCP checks say they opened no connection of their own", async () => {
    const seen: string[] = [];
    const recording: typeof globalThis.fetch = (input, init) => {
      const request = new Request(input, init);
      seen.push(`${request.method} ${new URL(request.url).pathname}`);
      return site(request);
    };
    const home = scratchDir("cmb-doctor-fetch-");
    const env = { PATH: process.env.PATH ?? "", HOME: home, CHAT_CONFIG_DIR: join(home, "config") };
    const report = await runDoctorArgs(["--token-store", "file", siteUrl], env, () => {}, {
      fetch: recording,
    });
    for (const id of ["dns", "tcp"])
      expect(checkOf(report, id), id).toMatchObject({
        status: "skip",
        detail: expect.stringMatching(/not checked: requests go through the fetch doctor was given/),
      });
    expect(checkOf(report, "tls")).toMatchObject({ status: "skip", detail: "not used (plain http)" });
    expect(seen).toContain("POST /mcp");
  });
});
