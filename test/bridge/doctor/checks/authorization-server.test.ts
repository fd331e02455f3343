/** doctor's authorization server check names the resource the tokens are bound to, and says when --disable-resource-parameter leaves them unbound (the reference server in process). */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useRequestableReferenceServer } from "../../../support/reference-request.js";
import { scratchDir } from "../../../support/scratch-dir.js";
import { checkOf, runDoctorArgs } from "../fixtures/doctor-command.js";

const reference = useRequestableReferenceServer();
let env: Record<string, string>;
beforeAll(() => {
  env = { PATH: process.env.PATH ?? "", CHAT_CONFIG_DIR: join(scratchDir("cmb-doctor-as-"), "config") };
});
const doctor = (args: string[]) =>
  runDoctorArgs(["--token-store", "file", ...args], env, () => {}, { fetch: reference.server.fetch });

describe("the authorization server check and the RFC 8707 resource", () => {
  it("names the resource the tokens are bound to", async () => {
    const server = reference.server;
    const report = await doctor([server.mcpUrl]);
    const check = checkOf(report, "authorization-server");
    expect(check.status).toBe("pass");
    expect(check.detail).toMatch(new RegExp(`resource ${server.mcpUrl.replaceAll(".", "\\.")}$`));
  });

  it("--disable-resource-parameter: passes, and says the tokens are then not audience-bound", async () => {
    const server = reference.server;
    const report = await doctor(["--disable-resource-parameter", server.mcpUrl]);
    const check = checkOf(report, "authorization-server");
    expect(check.status).toBe("pass");
    expect(check.detail).toContain(
      `resource ${server.mcpUrl} not sent (--disable-resource-parameter): tokens are not audience-bound to this server`,
    );
  });
});
