/** doctor pointed at some other web server: the endpoint check says it does not look like the chat service, with the URL. */
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../../../support/scratch-dir.js";
import { runDoctorArgs } from "../fixtures/doctor-command.js";

let site: Server;
let siteUrl: string;
let home: string;
beforeAll(async () => {
  // A web app that fails every POST with its HTML error page (a dev server, say).
  site = createServer((_request, response) => {
    response.writeHead(500, { "content-type": "text/html" });
    response.end("<html><body><h1>Internal Server Error</h1></body></html>");
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/mcp`;
  home = scratchDir("cmb-doctor-site-");
});
afterAll(async () => {
  await new Promise<void>((resolve) => site.close(() => resolve()));
  rmSync(home, { recursive: true, force: true });
});

describe("doctor against an unrelated web server", () => {
  it("the endpoint check fails with 'does not look like the chat service' and a fix to check the URL", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: home, CHAT_CONFIG_DIR: join(home, "config") };
    const report = await runDoctorArgs(["--token-store", "file", siteUrl], env, () => {});
    const endpoint = report.checks.find((check) => check.id === "endpoint");
    expect(endpoint?.status).toBe("fail");
    expect(endpoint?.detail).toContain(`the server at ${siteUrl} does not look like the chat service`);
    expect(endpoint?.fix).not.toMatch(/try again later/);
    expect(endpoint?.fix).toMatch(/check the URL/);
  });
});
