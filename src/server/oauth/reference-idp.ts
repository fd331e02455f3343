/** The reference server playing an enterprise IdP at `<base>/idp`: ID tokens for an account's dev API key, and RFC 8693 token exchange of them for ID-JAGs. */
import { generateKeyPairSync, type KeyObject, randomUUID } from "node:crypto";
import type { ServerContext } from "../context.js";
import { jsonResponse } from "../http.js";
import { sameSecret } from "../ids.js";
import type { ReferenceIdpOptions } from "../options.js";
import { OAuthError } from "./grants.js";
import {
  audiencesOf,
  decodeJwt,
  ID_JAG_TYPE,
  signedByOneOf,
  signJwt,
  type TrustedAssertionIssuer,
} from "./jwt.js";
import { answerOAuthErrors, basicCredentials, formOf, NO_STORE } from "./token.js";

export const IDP_PATH = "/idp";
export const IDP_METADATA_PATH = `/.well-known/oauth-authorization-server${IDP_PATH}`;
const TOKEN_EXCHANGE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN_TTL_SECONDS = 3600;
/** An ID-JAG is redeemed at once; five minutes covers a slow client. */
const ID_JAG_TTL_SECONDS = 300;
const KEY_ID = "reference-idp-1";

export interface ReferenceIdp {
  /** The IdP as an issuer the jwt-bearer grant trusts. */
  trusted: TrustedAssertionIssuer;
  /** Answers the IdP's paths; undefined for the rest. */
  handle(request: Request, path: string): Promise<Response | undefined>;
}

/** The IdP's signing key lives in memory: ID tokens and ID-JAGs end with the process. */
export function createReferenceIdp(
  ctx: ServerContext,
  options: ReferenceIdpOptions,
  now: () => number,
): ReferenceIdp {
  if (!ctx.accounts.has(options.account)) {
    throw new Error(
      `referenceIdp: no account or team "${options.account}"; use one of ${[...ctx.accounts.keys()].join(", ")}.`,
    );
  }
  const issuer = `${ctx.baseUrl}${IDP_PATH}`;
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const mcpClientId = options.mcpClientId ?? options.clientId;
  const person = [...ctx.users.values()].find((user) => user.memberOf.includes(options.account));
  const seconds = () => Math.floor(now() / 1000);

  const metadata = () => ({
    issuer,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks.json`,
    grant_types_supported: [TOKEN_EXCHANGE_GRANT_TYPE],
    token_endpoint_auth_methods_supported: options.clientSecret
      ? ["client_secret_post", "client_secret_basic"]
      : ["none"],
  });

  /** `POST /idp/id-token`: an ID token for the account's first person, to the holder of the account's dev API key. */
  async function idToken(request: Request): Promise<Response> {
    if (request.method !== "POST") throw new OAuthError("invalid_request", "use POST", 405);
    const key = /^Bearer +(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    let account: string | undefined;
    for (const verify of ctx.tokenVerifiers) {
      const principal = key ? await verify(key) : null;
      if (principal) {
        account = principal.via === "api-key" ? principal.account : undefined;
        break;
      }
    }
    if (account !== options.account || !person) {
      throw new OAuthError(
        "invalid_client",
        `send the dev API key of "${options.account}" as a Bearer token`,
        401,
      );
    }
    const token = await signJwt(
      { typ: "JWT" },
      {
        iss: issuer,
        sub: person.id,
        aud: options.clientId,
        iat: seconds(),
        exp: seconds() + ID_TOKEN_TTL_SECONDS,
        name: person.name,
      },
      privateKey,
      KEY_ID,
    );
    return jsonResponse(200, { id_token: token, expires_in: ID_TOKEN_TTL_SECONDS }, NO_STORE);
  }

  /** `POST /idp/token`: RFC 8693 token exchange of this IdP's ID token for an ID-JAG (SEP-990). */
  async function tokenExchange(request: Request): Promise<Response> {
    const form = await formOf(request);
    authenticate(request, form);
    if (form.get("grant_type") !== TOKEN_EXCHANGE_GRANT_TYPE) {
      throw new OAuthError("unsupported_grant_type", `this IdP offers ${TOKEN_EXCHANGE_GRANT_TYPE} only`);
    }
    if (form.get("requested_token_type") !== ID_JAG_TOKEN_TYPE) {
      throw new OAuthError("invalid_request", `requested_token_type must be ${ID_JAG_TOKEN_TYPE}`);
    }
    if (form.get("subject_token_type") !== ID_TOKEN_TYPE) {
      throw new OAuthError("invalid_request", `subject_token_type must be ${ID_TOKEN_TYPE}`);
    }
    const audience = form.get("audience");
    if (audience?.replace(/\/+$/, "") !== ctx.baseUrl) {
      throw new OAuthError("invalid_target", `this IdP issues ID-JAGs for ${ctx.baseUrl} only`);
    }
    const resource = form.get("resource");
    if (resource && !resource.startsWith(`${ctx.baseUrl}/`)) {
      throw new OAuthError("invalid_target", `resource must be one of ${ctx.baseUrl}`);
    }
    const subject = await checkedIdToken(form.get("subject_token"));
    const scope = form.get("scope");
    const jag = await signJwt(
      { typ: ID_JAG_TYPE },
      {
        iss: issuer,
        sub: subject,
        aud: ctx.baseUrl,
        client_id: mcpClientId,
        ...(resource ? { resource } : {}),
        ...(scope ? { scope } : {}),
        jti: randomUUID(),
        iat: seconds(),
        exp: seconds() + ID_JAG_TTL_SECONDS,
      },
      privateKey,
      KEY_ID,
    );
    return jsonResponse(
      200,
      {
        access_token: jag,
        issued_token_type: ID_JAG_TOKEN_TYPE,
        token_type: "N_A",
        expires_in: ID_JAG_TTL_SECONDS,
        ...(scope ? { scope } : {}),
      },
      NO_STORE,
    );
  }

  function authenticate(request: Request, form: URLSearchParams): void {
    const basic = basicCredentials(request.headers.get("authorization") ?? "");
    const clientId = basic ? basic.clientId : form.get("client_id");
    const secret = basic ? basic.secret : form.get("client_secret");
    const expected = options.clientSecret;
    const secretOk = expected === undefined ? !secret : secret !== null && sameSecret(secret, expected);
    if (clientId !== options.clientId || !secretOk) {
      throw new OAuthError("invalid_client", "unknown client or wrong client secret", basic ? 401 : 400);
    }
  }

  /** The subject of an ID token this IdP issued to its client, unexpired; `invalid_grant` otherwise. */
  async function checkedIdToken(token: string | null): Promise<string> {
    if (!token) throw new OAuthError("invalid_request", "subject_token is required (an ID token)");
    const jwt = decodeJwt(token);
    if (!jwt || !(await signedByOneOf(jwt, [publicKey])))
      throw new OAuthError("invalid_grant", "the ID token is not one this IdP issued");
    const { payload } = jwt;
    if (payload.iss !== issuer || !audiencesOf(payload).includes(options.clientId)) {
      throw new OAuthError("invalid_grant", "the ID token was issued to another client");
    }
    if (typeof payload.exp !== "number" || payload.exp <= seconds()) {
      throw new OAuthError("invalid_grant", "the ID token has expired");
    }
    if (typeof payload.sub !== "string" || !payload.sub)
      throw new OAuthError("invalid_grant", "the ID token has no sub");
    return payload.sub;
  }

  return {
    trusted: { kind: "enterprise", issuer, keys: [publicKey as KeyObject], account: options.account },
    async handle(request, path) {
      if (path === IDP_METADATA_PATH)
        return jsonResponse(200, metadata(), { "cache-control": "public, max-age=3600" });
      if (path === `${IDP_PATH}/jwks.json`) {
        const jwk = { ...publicKey.export({ format: "jwk" }), kid: KEY_ID, alg: "ES256", use: "sig" };
        return jsonResponse(200, { keys: [jwk] });
      }
      if (path === `${IDP_PATH}/id-token`) return answerOAuthErrors(() => idToken(request));
      if (path === `${IDP_PATH}/token`) return answerOAuthErrors(() => tokenExchange(request));
      return undefined;
    },
  };
}
