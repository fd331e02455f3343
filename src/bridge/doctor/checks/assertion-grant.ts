/** The registration check's verdict for a sign-in with an assertion (`--workload-token-file`, `--idp-*`): does the authorization server offer the jwt-bearer grant. */
import type { CheckResult } from "../check.js";

const JWT_BEARER_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** What doctor reads of the options and the server's metadata; never a token of the files. */
export interface AssertionGrantFacts {
  clientId: string;
  workloadTokenFile?: string | undefined;
  idpIssuer?: string | undefined;
  grantTypesSupported?: readonly string[] | undefined;
}

export function assertionGrantResult(facts: AssertionGrantFacts): CheckResult {
  const what = facts.workloadTokenFile !== undefined ? "the workload token" : "an ID-JAG";
  const grants = facts.grantTypesSupported;
  if (grants && !grants.includes(JWT_BEARER_GRANT_TYPE)) {
    return {
      status: "fail",
      detail: `the authorization server does not offer the jwt-bearer grant (it offers ${grants.join(", ")})`,
      fix:
        facts.workloadTokenFile !== undefined
          ? "leave out --workload-token-file, or ask the server's operator to trust your platform's issuer"
          : "leave out the --idp-* flags, or ask the server's operator to trust your identity provider",
    };
  }
  const from =
    facts.workloadTokenFile !== undefined
      ? `the token in ${facts.workloadTokenFile}`
      : `the ID token exchanged at ${facts.idpIssuer}`;
  return { status: "pass", detail: `jwt-bearer as ${facts.clientId} with ${what} (${from}); no browser` };
}
