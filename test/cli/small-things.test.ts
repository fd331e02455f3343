/** Issue 26 item 9, chat-cli's smaller rough edges: the help's exit codes, what a bad --task lacks, --debug redaction. */
import { describe, expect, it } from "vitest";
import { parseTaskFlag } from "../../src/cli/commands/resolve.js";
import { run } from "../../src/cli/run.js";
import { redact } from "../../src/internal/redact.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";
import { inProcessCli, recordingIo } from "./helpers.js";

describe("--help lists every exit code", () => {
  it("130 (interrupted while waiting; the request may still complete) is among them", async () => {
    const io = recordingIo();
    expect(await run(["--help"], io)).toBe(0);
    expect(io.out).toMatch(/Exit codes:.*4 authentication needed.*130 interrupted while waiting/s);
  });
});

describe("--task names what is wrong with the JSON", () => {
  it.each([
    ["{}", /--task has no "type" field/],
    ["[]", /--task must be a JSON object/],
    ['{"type":"confirmed-steps"}', /--task: "connectedIntegrationNames" is missing/],
    ['{"type":"confirmed-permissions","permissions":"all"}', /--task: "permissions" must be an array/],
  ])("%s", async (text, message) => {
    await expect(parseTaskFlag(text)).rejects.toThrow(message);
  });
});

describe("--debug redacts the values of secret fields only", () => {
  it("an API error code stays readable; an authorization code in a form body does not", () => {
    expect(redact('{"status":404,"code":"not_found","requestId":"req_1"}')).toBe(
      '{"status":404,"code":"not_found","requestId":"req_1"}',
    );
    expect(redact("grant_type=authorization_code&code=abcdef123")).not.toContain("abcdef123");
    expect(redact('{"access_token":"at-123456","error":"x"}')).not.toContain("at-123456");
  });

  describe("through the CLI", () => {
    const reference = useRequestableReferenceServer();

    it("a 404's debug line shows its code", async () => {
      const { server } = reference;
      const { code, stderr } = await inProcessCli(server)([
        "--token",
        server.apiKeys.acme as string,
        "--debug",
        "get",
        "chat_missing",
      ]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/debug: \{"status":404,"code":"not_found"/);
    });
  });
});
