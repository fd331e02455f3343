/** The jwt-bearer grant (RFC 7523 §2.1): workload identity tokens from trusted issuers, and ID-JAGs from trusted enterprise IdPs (SEP-990). */
import type { KeyObject } from "node:crypto";
import type { AssertionGrantOptions } from "../assertion-grant-options.js";
import type { Approval, OAuthGrants } from "./grants.js";
import { audiencesOf, decodeJwt, publicKeysOfJwks, signedByOneOf } from "./jwt.js";
import { type AuthorizationFlows, OAuthError, type TokenResponseBody, tokenResponse } from "./provider.js";
import type { RegisteredClient } from "./registration.js";

export const JWT_BEARER_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** The `typ` of an identity assertion authorization grant (SEP-990). */
export const ID_JAG_TYPE = "oauth-id-jag+jwt";
/** Clock difference allowed on `exp`, `nbf` and `iat`. */
const CLOCK_SKEW_SECONDS = 30;
/** Most ID-JAG `jti`s remembered (each until its `exp`); past it, after pruning, new ones are refused. */
const MAX_REMEMBERED_GRANTS = 10_000;

/** An issuer whose JWTs this grant takes: a workload platform, or an enterprise IdP issuing ID-JAGs. */
export interface TrustedAssertionIssuer {
  kind: "workload" | "enterprise";
  issuer: string;
  keys: KeyObject[];
  /** Accepted `aud` values; default this server's issuer and token endpoint. */
  audiences?: string[];
  account: string;
  subjects?: ReadonlySet<string>;
}

/** The issuers the options name, checked (keys public and of a known type, accounts seeded, no issuer twice). */
export function trustedIssuersOf(
  options: AssertionGrantOptions,
  accounts: ReadonlyMap<string, unknown>,
): TrustedAssertionIssuer[] {
  const trusted: TrustedAssertionIssuer[] = [];
  const add = (entry: TrustedAssertionIssuer, where: string) => {
    if (!accounts.has(entry.account)) {
      throw new Error(
        `${where}: no account or team "${entry.account}"; use one of ${[...accounts.keys()].join(", ")}.`,
      );
    }
    if (trusted.some((other) => other.issuer === entry.issuer)) {
      throw new Error(`${where}: the issuer ${entry.issuer} is named twice`);
    }
    trusted.push(entry);
  };
  for (const [index, entry] of (options.trustedWorkloadIssuers ?? []).entries()) {
    const where = `trustedWorkloadIssuers[${index}]`;
    if (!entry.issuer) throw new Error(`${where}: issuer is required`);
    const audiences = entry.audience === undefined ? undefined : [entry.audience].flat();
    add(
      {
        kind: "workload",
        issuer: entry.issuer,
        keys: publicKeysOfJwks(entry.jwks, where),
        account: entry.account,
        ...(audiences ? { audiences } : {}),
        ...(entry.subjects ? { subjects: new Set(entry.subjects) } : {}),
      },
      where,
    );
  }
  for (const [index, entry] of (options.trustedEnterpriseIdps ?? []).entries()) {
    const where = `trustedEnterpriseIdps[${index}]`;
    if (!entry.issuer) throw new Error(`${where}: issuer is required`);
    add(
      {
        kind: "enterprise",
        issuer: entry.issuer,
        keys: publicKeysOfJwks(entry.jwks, where),
        account: entry.account,
      },
      where,
    );
  }
  return trusted;
}

export interface JwtBearerGrantOptions {
  /** This authorization server's issuer; the token endpoint is `<issuer>/token`. */
  issuer: string;
  trusted: TrustedAssertionIssuer[];
  grants: OAuthGrants;
  flows: AuthorizationFlows;
  now: () => number;
  /** True for a seeded person's id: the grant then acts as that person too. */
  isKnownUser: (id: string) => boolean;
}

/** Redeems assertions at `/token`; refusals are RFC 6749 §5.2 errors that never echo the assertion. */
export class JwtBearerGrant {
  readonly #options: JwtBearerGrantOptions;
  readonly #redeemed = new Map<string, number>();

  constructor(options: JwtBearerGrantOptions) {
    this.#options = options;
  }

  /** True when an issuer is trusted: the grant is then offered (metadata, pre-registered clients). */
  get offered(): boolean {
    return this.#options.trusted.length > 0;
  }

  async redeem(client: RegisteredClient, form: URLSearchParams): Promise<TokenResponseBody> {
    const assertion = form.get("assertion");
    if (!assertion) throw new OAuthError("invalid_request", "assertion is required (a JWT)");
    const jwt = decodeJwt(assertion);
    if (!jwt) throw refused("the assertion is not a compact JWT");
    const { header, payload } = jwt;
    const trusted = this.#options.trusted.find((entry) => entry.issuer === payload.iss);
    if (!trusted) throw refused("the assertion's issuer (iss) is not trusted here");
    if (!(await signedByOneOf(jwt, trusted.keys)))
      throw refused("the assertion's signature does not match a key of its issuer");
    const isIdJag = header.typ === ID_JAG_TYPE;
    if ((trusted.kind === "enterprise") !== isIdJag) {
      throw refused(
        trusted.kind === "enterprise"
          ? `an enterprise IdP's assertion must be an ID-JAG (typ ${ID_JAG_TYPE})`
          : "an ID-JAG is taken only from a trusted enterprise IdP",
      );
    }
    const { issuer } = this.#options;
    const accepted = trusted.audiences ?? [issuer, `${issuer}/`, ...(isIdJag ? [] : [`${issuer}/token`])];
    if (!audiencesOf(payload).some((aud) => accepted.includes(aud))) {
      throw refused(`the assertion's audience (aud) must be ${accepted[0]}`);
    }
    const now = this.#options.now() / 1000;
    if (typeof payload.exp !== "number" || payload.exp + CLOCK_SKEW_SECONDS <= now) {
      throw refused("the assertion has expired (exp)");
    }
    if (typeof payload.nbf === "number" && payload.nbf > now + CLOCK_SKEW_SECONDS) {
      throw refused("the assertion is not valid yet (nbf)");
    }
    if (typeof payload.iat === "number" && payload.iat > now + CLOCK_SKEW_SECONDS) {
      throw refused("the assertion was issued in the future (iat)");
    }
    const subject = payload.sub;
    if (typeof subject !== "string" || subject.length === 0 || subject.length > 256) {
      throw refused("the assertion has no subject (sub)");
    }
    if (trusted.subjects && !trusted.subjects.has(subject)) {
      throw refused("the assertion's subject (sub) may not use this server");
    }
    let resource = form.get("resource");
    let allowedScopes: string[] | undefined;
    if (isIdJag) {
      if (payload.client_id !== client.client_id) {
        throw refused("the ID-JAG was issued to another client (client_id)");
      }
      if (typeof payload.resource === "string") {
        if (resource && resource.replace(/\/+$/, "") !== payload.resource.replace(/\/+$/, "")) {
          throw new OAuthError("invalid_target", "resource does not match the ID-JAG's resource");
        }
        resource = payload.resource;
      }
      if (typeof payload.scope === "string") allowedScopes = payload.scope.split(" ").filter(Boolean);
      this.#rememberOnce(trusted.issuer, payload.jti, payload.exp);
    }
    const requested = form.get("scope") ?? (allowedScopes?.length ? allowedScopes.join(" ") : null);
    const checked = this.#options.flows.checkScopesAndResource(requested, resource);
    if (allowedScopes && checked.scopes.some((scope) => !allowedScopes.includes(scope))) {
      throw new OAuthError("invalid_scope", "the scope asked for is wider than the ID-JAG grants");
    }
    const approval: Approval = {
      clientId: client.client_id,
      account: trusted.account,
      ...checked,
      ...(isIdJag && this.#options.isKnownUser(subject) ? { userId: subject } : {}),
    };
    return tokenResponse(this.#options.grants.issueWithoutPerson(approval));
  }

  /** An ID-JAG is redeemed once: its `jti` is kept until it expires. */
  #rememberOnce(issuer: string, jti: unknown, exp: number): void {
    if (typeof jti !== "string" || jti.length === 0 || jti.length > 256) {
      throw refused("the ID-JAG has no jti (a unique id of up to 256 characters)");
    }
    const key = `${issuer}\n${jti}`;
    const now = this.#options.now();
    if ((this.#redeemed.get(key) ?? 0) > now) throw refused("this ID-JAG was already redeemed");
    if (this.#redeemed.size >= MAX_REMEMBERED_GRANTS) {
      for (const [seen, until] of this.#redeemed) if (until <= now) this.#redeemed.delete(seen);
      if (this.#redeemed.size >= MAX_REMEMBERED_GRANTS)
        throw refused("too many ID-JAGs in flight; retry later");
    }
    this.#redeemed.set(key, (exp + CLOCK_SKEW_SECONDS) * 1000);
  }
}

function refused(why: string): OAuthError {
  return new OAuthError("invalid_grant", why);
}
