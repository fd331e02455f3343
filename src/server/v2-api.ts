/** `/v2` request handling without a web framework: auth, rate limit, SSO, validation, routing, error bodies. */
import type * as z from "zod";
import {
  CreateChatBodySchema,
  ERROR_STATUS,
  IdSchema,
  ListChatsQuerySchema,
  ListQuerySchema,
  ResolveBodySchema,
  SendMessageBodySchema,
  type Task,
} from "../wire/index.js";
import {
  type ChatService,
  type CredentialCheck,
  type CredentialRefusal,
  type Principal,
  ServiceError,
  type SsoGate,
  type TokenVerifier,
} from "./context.js";
import type { IdempotencyKeys } from "./idempotency.js";
import { newId } from "./ids.js";
import type { TokenBucketLimiter } from "./rate-limit.js";

/** Bodies above 1 MiB are refused with 413 `payload_too_large`. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface V2Request {
  method: string;
  /** Path from `/v2` on, still percent-encoded, without the query. */
  path: string;
  query: URLSearchParams;
  authorization: string | null | undefined;
  /** The `DPoP` header (RFC 9449 proof), when sent. */
  dpop?: string | null;
  /** The URL the client addressed, which a DPoP proof's `htu` names. */
  url?: string;
  /** Raw body text; undefined or empty when the request had none. */
  body: string | undefined;
  requestId: string;
  /** The `Idempotency-Key` header of a POST, when sent. */
  idempotencyKey?: string | null;
}

export interface V2Response {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface V2ApiOptions {
  service: ChatService;
  tokenVerifiers: readonly TokenVerifier[];
  sso?: SsoGate;
  rateLimiter?: TokenBucketLimiter;
  /** The clock (ms) a token's expiry is judged by: the OAuth server's (`oauthNow`), so tests need not wait. */
  now?: () => number;
  /** RFC 9728 metadata URL named in `WWW-Authenticate` on every 401 and 403 `insufficient_scope`. */
  resourceMetadataUrl: () => string;
  /** RFC 8707 resource identifier of `/v2` (`<base>/v2`): the only one an OAuth token here may be issued for. */
  resource: () => string;
  /** DPoP-bound tokens checked against their proofs (read at each request: the OAuth part sets it). */
  credentialCheck?: () => CredentialCheck | undefined;
  /** Where POSTs with an `Idempotency-Key` are remembered; without it the header is ignored. */
  idempotency?: IdempotencyKeys;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The incoming `x-request-id` when it is sane, else a fresh `req_...` id. */
export function requestIdFrom(incoming: string | null | undefined): string {
  return incoming && SANE_REQUEST_ID.test(incoming) ? incoming : newId("req");
}

export type V2Handler = (request: V2Request) => Promise<V2Response>;

export type BearerResult =
  | { principal: Principal; scheme: "bearer" | "dpop"; token: string }
  | { problem: "missing" | "invalid" };

/**
 * Resolves `Authorization: Bearer <token>` (or `DPoP <token>`, RFC 9449 §7.1) with the verifiers in order (API keys,
 * then OAuth tokens). Whether the scheme and proof suit the token is `ServerContext.credentialCheck`'s to judge.
 */
export async function authenticateBearer(
  authorization: string | null | undefined,
  verifiers: readonly TokenVerifier[],
  nowSeconds: number = Date.now() / 1000,
): Promise<BearerResult> {
  if (!authorization) return { problem: "missing" };
  const match = /^(Bearer|DPoP) +([\x21-\x7e]+) *$/i.exec(authorization);
  const token = match?.[2];
  if (!token) return { problem: "invalid" };
  const scheme = match[1]!.toLowerCase() === "dpop" ? "dpop" : "bearer";
  for (const verify of verifiers) {
    const principal = await verify(token);
    if (principal) {
      if (principal.expiresAt !== undefined && principal.expiresAt <= nowSeconds)
        return { problem: "invalid" };
      return { principal, scheme, token };
    }
  }
  return { problem: "invalid" };
}

/** The rate limiter's bucket of a credential (on `/v2` and `/mcp`): its account and grant or API key. */
export function rateLimitKey(principal: Principal): string {
  return `${principal.account}\u0000${principal.subject}`;
}

/** The RFC 6750 challenge: no error for a missing token, `invalid_token` for a bad one. */
export function bearerChallenge(problem: "missing" | "invalid", resourceMetadataUrl: string): string {
  const metadata = `resource_metadata="${resourceMetadataUrl}"`;
  if (problem === "missing") return `Bearer ${metadata}`;
  return `Bearer error="invalid_token", error_description="The access token or API key is invalid or expired", ${metadata}`;
}

/** The scope a `/v2` call needs: `chat:read` for GETs, `chat:write` for everything else (POSTs). */
export function scopeFor(method: string): "chat:read" | "chat:write" {
  return method.toUpperCase() === "GET" || method.toUpperCase() === "HEAD" ? "chat:read" : "chat:write";
}

/**
 * What `/v2` refuses of an authenticated principal, by the service's rules: an OAuth token issued for another resource
 * (or for none) is `invalid_token`, one without the call's scope is `insufficient_scope`. API keys pass: they have
 * full access to their own account or team.
 */
export function accessProblem(
  principal: Principal,
  method: string,
  resource: string,
): { problem: "wrong-resource" } | { problem: "insufficient-scope"; scope: string } | null {
  if (principal.via !== "oauth") return null;
  if (principal.resource !== resource) return { problem: "wrong-resource" };
  const scope = scopeFor(method);
  return principal.scopes.includes(scope) ? null : { problem: "insufficient-scope", scope };
}

/** 401 `invalid_token` for a token of another resource, 403 `insufficient_scope` naming the scope it lacks. */
function accessRefusal(
  refused: NonNullable<ReturnType<typeof accessProblem>>,
  options: V2ApiOptions,
  requestId: string,
): V2Response {
  const metadataUrl = options.resourceMetadataUrl();
  if (refused.problem === "wrong-resource") {
    const response = errorResponse(
      new ServiceError(
        "unauthorized",
        `The access token was issued for another resource, not ${options.resource()}; sign in for it (chat-cli login).`,
      ),
      requestId,
    );
    response.headers["www-authenticate"] =
      `Bearer error="invalid_token", error_description="The access token was issued for another resource", ` +
      `resource_metadata="${metadataUrl}"`;
    return response;
  }
  const response = errorResponse(
    new ServiceError(
      "forbidden",
      `The access token lacks the ${refused.scope} scope this call needs (insufficient_scope); sign in again and approve it.`,
      { scope: refused.scope },
    ),
    requestId,
  );
  response.headers["www-authenticate"] = insufficientScopeChallenge(refused.scope, metadataUrl);
  return response;
}

/** The RFC 6750 challenge for a token without the scope a call needs (the client can step up to it). */
export function insufficientScopeChallenge(scope: string, resourceMetadataUrl: string): string {
  return (
    `Bearer error="insufficient_scope", scope="${scope}", ` +
    `error_description="The access token lacks the ${scope} scope", resource_metadata="${resourceMetadataUrl}"`
  );
}

/** A credential's proof refused: 401 with its challenge, or 429 when the server cannot remember the proof now. */
function unprovenResponse(refusal: CredentialRefusal, requestId: string): V2Response {
  const response = errorResponse(
    refusal.status === 429
      ? new ServiceError("rate_limited", `${refusal.description}.`, {
          retryAfter: Number(refusal.headers["retry-after"] ?? 1),
        })
      : new ServiceError("unauthorized", `${refusal.description}.`),
    requestId,
  );
  Object.assign(response.headers, refusal.headers, { "www-authenticate": refusal.wwwAuthenticate });
  return response;
}

/** The service's error body for any failure; unknown errors become 500 `internal` without details. */
export function errorResponse(error: unknown, requestId: string): V2Response {
  const failure =
    error instanceof ServiceError
      ? error
      : new ServiceError("internal", "The server failed to handle the request.");
  const headers: Record<string, string> = {};
  const retryAfter = failure.extra.retryAfter;
  if (typeof retryAfter === "number") headers["retry-after"] = String(retryAfter);
  return {
    status: ERROR_STATUS[failure.code],
    headers,
    body: { error: { ...failure.extra, code: failure.code, message: failure.message, requestId } },
  };
}

export function createV2Handler(options: V2ApiOptions): V2Handler {
  return async (request) => {
    try {
      const auth = await authenticateBearer(
        request.authorization,
        options.tokenVerifiers,
        (options.now ?? Date.now)() / 1000,
      );
      if ("problem" in auth) {
        const response = errorResponse(
          new ServiceError(
            "unauthorized",
            auth.problem === "missing"
              ? "Send Authorization: Bearer <API key or OAuth access token>."
              : "The API key or access token is invalid or expired; sign in again.",
          ),
          request.requestId,
        );
        response.headers["www-authenticate"] = bearerChallenge(auth.problem, options.resourceMetadataUrl());
        return response;
      }
      const { principal } = auth;
      // The cheap per-credential limit first: a flood of proofs costs no signature verification past it.
      const decision = options.rateLimiter?.take(rateLimitKey(principal));
      if (decision && !decision.allowed) {
        throw new ServiceError(
          "rate_limited",
          "Too many requests; retry after the number of seconds in Retry-After.",
          { retryAfter: decision.retryAfterSeconds },
        );
      }
      const verdict = await options.credentialCheck?.()?.({
        ...auth,
        proof: request.dpop ?? null,
        method: request.method,
        url: request.url ?? `${options.resource()}${request.path.slice("/v2".length)}`,
        resourceMetadataUrl: options.resourceMetadataUrl(),
      });
      if (verdict && "refusal" in verdict) return unprovenResponse(verdict.refusal, request.requestId);
      const refused = accessProblem(principal, request.method, options.resource());
      if (refused) return accessRefusal(refused, options, request.requestId);
      // Only now is a DPoP proof used: a request refused above takes no room in the replay ledger.
      const unspent = verdict && "spend" in verdict ? verdict.spend() : undefined;
      if (unspent) return unprovenResponse(unspent, request.requestId);
      options.sso?.assertVerified(principal);
      const key = request.idempotencyKey;
      if (key == null || request.method.toUpperCase() !== "POST" || !options.idempotency)
        return await route(options.service, principal, request);
      const owner = { account: principal.account, credential: principal.subject };
      return await options.idempotency.run(owner, key, request, () =>
        route(options.service, principal, request).catch((error: unknown) => {
          if (!(error instanceof ServiceError)) console.error("reference server: /v2 handler failed:", error);
          return errorResponse(error, request.requestId);
        }),
      );
    } catch (error) {
      if (!(error instanceof ServiceError)) console.error("reference server: /v2 handler failed:", error);
      return errorResponse(error, request.requestId);
    }
  };
}

async function route(service: ChatService, principal: Principal, request: V2Request): Promise<V2Response> {
  const method = request.method.toUpperCase();
  const segments = request.path.split("/").slice(1);
  if (segments[0] !== "v2" || segments[1] !== "chats" || segments.length > 5) throw noRoute(request);
  const [, , rawChatId, sub, rawMessageId] = segments;

  if (rawChatId === undefined || (rawChatId === "" && segments.length === 3)) {
    if (method === "GET") {
      const query = parse(ListChatsQuerySchema, queryObject(request.query), "query");
      return ok(await service.listChats(principal, query));
    }
    if (method === "POST") {
      const body = parse(CreateChatBodySchema, json(request.body), "body");
      return ok(await service.createChat(principal, body), 201);
    }
    throw noRoute(request);
  }
  const chatId = pathId(rawChatId, "chatId");
  if (sub === undefined) {
    if (method === "GET") return ok(await service.getChat(principal, chatId));
    throw noRoute(request);
  }
  if (sub === "preview" && rawMessageId === undefined && method === "GET") {
    return ok(await service.getPreview(principal, chatId));
  }
  if (sub !== "messages") throw noRoute(request);
  if (rawMessageId === undefined) {
    if (method === "GET") {
      const query = parse(ListQuerySchema, queryObject(request.query), "query");
      return ok(await service.listMessages(principal, chatId, query));
    }
    if (method === "POST") {
      const body = parse(SendMessageBodySchema, json(request.body), "body");
      return ok(await service.sendMessage(principal, chatId, body));
    }
    throw noRoute(request);
  }
  if (rawMessageId === "resolve" && method === "POST") {
    const body = parse(ResolveBodySchema, json(request.body), "body");
    return ok(await service.resolveTask(principal, chatId, body.task as Task));
  }
  if (method === "GET")
    return ok(await service.getMessage(principal, chatId, pathId(rawMessageId, "messageId")));
  throw noRoute(request);
}

function ok(body: unknown, status = 200): V2Response {
  return { status, headers: {}, body };
}

function noRoute(request: V2Request): ServiceError {
  return new ServiceError("not_found", `No route ${request.method.toUpperCase()} ${request.path}.`);
}

function badRequest(message: string, extra: Record<string, unknown> = {}): ServiceError {
  return new ServiceError("bad_request", message, extra);
}

function pathId(raw: string, name: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw badRequest(`${name} is not a valid id.`);
  }
  const result = IdSchema.safeParse(decoded);
  if (!result.success) throw badRequest(`${name} ${result.error.issues[0]?.message ?? "is not a valid id"}.`);
  return result.data;
}

function queryObject(query: URLSearchParams): Record<string, string> {
  return Object.fromEntries(query);
}

function json(body: string | undefined): unknown {
  if (body === undefined || body.trim() === "") throw badRequest("The request needs a JSON body.");
  try {
    return JSON.parse(body);
  } catch {
    throw badRequest("The request body is not valid JSON.");
  }
}

function parse<T extends z.ZodType>(schema: T, value: unknown, where: "body" | "query"): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: [where, ...issue.path.map(String)].join("."),
    message: issue.message,
  }));
  const first = issues[0];
  throw badRequest(first ? `Invalid ${first.path}: ${first.message}` : `Invalid ${where}.`, { issues });
}
