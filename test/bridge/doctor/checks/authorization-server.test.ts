/** doctor's authorization server check names the resource the tokens are bound to, and says when --disable-resource-parameter leaves them unbound. */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../../../src/server/index.js";
import { scratchDir } from "../../../support/scratch-dir.js";
import { checkOf, runDoctorArgs } from "../fixtures/doctor-command.js";

let server: ReferenceServer;
let env: Record<string, string>;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0 });
  env = { PATH: process.env.PATH ?? "", CHAT_CONFIG_DIR: join(scratchDir("cmb-doctor-as-"), "config") };
});
afterAll(async () => {
  await server?.close();
});

describe("the authorization server check and the RFC 8707 resource", () => {
  it("names the resource the tokens are bound to", async () => {
    const report = await runDoctorArgs(["--token-store", "file", server.mcpUrl], env, () => {});
    const check = checkOf(report, "authorization-server");
    expect(check.status).toBe("pass");
    expect(check.detail).toMatch(new RegExp(`resource ${server.mcpUrl.replaceAll(".", "\\.")}$`));
  });

  it("--disable-resource-parameter: passes, and says the tokens are then not audience-bound", async () => {
    const report = await runDoctorArgs(
      ["--token-store", "file", "--disable-resource-parameter", server.mcpUrl],
      env,
      () => {},
    );
    const check = checkOf(report, "authorization-server");
    expect(check.status).toBe("pass");
    expect(check.detail).toContain(
      `resource ${server.mcpUrl} not sent (--disable-resource-parameter): tokens are not audience-bound to this server`,
    );
  });
});
