/** `/v2` request handling without a web framework: auth, rate limit, SSO, validation, routing, error bodies. */
import type * as z from "zod";
import {
  CreateChatBodySchema,
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
import { errorResponse, type JsonAnswer, jsonResponse, MAX_BODY_BYTES, readBodyText } from "./http.js";
import type { IdempotencyKeys } from "./idempotency.js";
import type { TokenBucketLimiter } from "./rate-limit.js";

/** What `route` needs of a request: the path from `/v2` on (still percent-encoded) and the body text. */
interface V2Call {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string | undefined;
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

/** Answers one `/v2` request; `path` from `/v2` on, as the client sent it (still percent-encoded). */
export type V2Handler = (request: Request, path: string, requestId: string) => Promise<Response>;

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

/**
 * What `/v2` refuses of an authenticated principal, by the service's rules: an OAuth token issued for another resource
 * (or for none) is 401 `invalid_token`, one without the call's scope (`chat:read` for GETs, `chat:write` for POSTs)
 * 403 `insufficient_scope` naming it. API keys pass: they have full access to their own account or team.
 */
function accessRefusal(
  principal: Principal,
  method: string,
  options: V2ApiOptions,
  requestId: string,
): JsonAnswer | null {
  if (principal.via !== "oauth") return null;
  const metadataUrl = options.resourceMetadataUrl();
  if (principal.resource !== options.resource()) {
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
  const scope = ["GET", "HEAD"].includes(method.toUpperCase()) ? "chat:read" : "chat:write";
  if (principal.scopes.includes(scope)) return null;
  const response = errorResponse(
    new ServiceError(
      "forbidden",
      `The access token lacks the ${scope} scope this call needs (insufficient_scope); sign in again and approve it.`,
      { scope },
    ),
    requestId,
  );
  response.headers["www-authenticate"] = insufficientScopeChallenge(scope, metadataUrl);
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
function unprovenResponse(refusal: CredentialRefusal, requestId: string): JsonAnswer {
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

export function createV2Handler(options: V2ApiOptions): V2Handler {
  return async (request, path, requestId) => {
    const answer = await answerV2(options, request, path, requestId);
    // Chats are private to a credential: no shared or browser cache may keep them (jsonResponse: no-store).
    return jsonResponse(answer.status, answer.body, answer.headers);
  };
}

async function answerV2(
  options: V2ApiOptions,
  request: Request,
  path: string,
  requestId: string,
): Promise<JsonAnswer> {
  let body: string | undefined;
  if (request.method !== "GET" && request.method !== "HEAD") {
    try {
      body = await readBodyText(request, MAX_BODY_BYTES);
    } catch (error) {
      return errorResponse(
        error instanceof ServiceError
          ? error
          : new ServiceError("bad_request", "The request could not be read."),
        requestId,
      );
    }
  }
  const call: V2Call = { method: request.method, path, query: new URL(request.url).searchParams, body };
  try {
    const auth = await authenticateBearer(
      request.headers.get("authorization"),
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
        requestId,
      );
      // RFC 6750: no error for a missing token, `invalid_token` for a bad one.
      const metadata = `resource_metadata="${options.resourceMetadataUrl()}"`;
      response.headers["www-authenticate"] =
        auth.problem === "missing"
          ? `Bearer ${metadata}`
          : `Bearer error="invalid_token", error_description="The access token or API key is invalid or expired", ${metadata}`;
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
      proof: request.headers.get("dpop"),
      method: request.method,
      url: `${options.resource()}${path.slice("/v2".length)}`,
      resourceMetadataUrl: options.resourceMetadataUrl(),
    });
    if (verdict && "refusal" in verdict) return unprovenResponse(verdict.refusal, requestId);
    const refused = accessRefusal(principal, request.method, options, requestId);
    if (refused) return refused;
    // Only now is a DPoP proof used: a request refused above takes no room in the replay ledger.
    const unspent = verdict && "spend" in verdict ? verdict.spend() : undefined;
    if (unspent) return unprovenResponse(unspent, requestId);
    options.sso?.assertVerified(principal);
    const key = request.headers.get("idempotency-key");
    if (key == null || request.method.toUpperCase() !== "POST" || !options.idempotency)
      return await route(options.service, principal, call);
    const owner = { account: principal.account, credential: principal.subject };
    return await options.idempotency.run(owner, key, call, () =>
      route(options.service, principal, call).catch((error: unknown) => {
        if (!(error instanceof ServiceError)) console.error("reference server: /v2 handler failed:", error);
        return errorResponse(error, requestId);
      }),
    );
  } catch (error) {
    if (!(error instanceof ServiceError)) console.error("reference server: /v2 handler failed:", error);
    return errorResponse(error, requestId);
  }
}

async function route(service: ChatService, principal: Principal, request: V2Call): Promise<JsonAnswer> {
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

function ok(body: unknown, status = 200): JsonAnswer {
  return { status, headers: {}, body };
}

function noRoute(request: V2Call): ServiceError {
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
