/** doctor's registration verdict for `--workload-token-file` and the `--idp-*` flags: the jwt-bearer grant offered or not, said with the fix. */
import { describe, expect, it } from "vitest";
import { assertionGrantResult } from "../../../../src/bridge/doctor/login.js";

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

describe("a sign-in with an assertion", () => {
  it("passes when the server offers the jwt-bearer grant, naming the file and never its token", () => {
    const result = assertionGrantResult("deployer", { workloadTokenFile: "/run/token" }, [
      "authorization_code",
      JWT_BEARER,
    ]);
    expect(result).toMatchObject({ status: "pass", detail: expect.stringContaining("/run/token") });
  });

  it("fails when the server does not offer it, with what to do", () => {
    const result = assertionGrantResult(
      "xaa",
      { enterpriseIdp: { issuer: "https://idp.example", clientId: "idp", idTokenFile: "/run/id" } },
      ["authorization_code"],
    );
    expect(result).toMatchObject({ status: "fail", fix: expect.stringContaining("identity provider") });
  });
});
