/** The `/mcp` route: Host/Origin checks, OAuth bearer auth and tool scopes, then MCP 2026-07-28 served statelessly and 2025-era sessions, by era. */
import { randomBytes } from "node:crypto";
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  McpServer,
} from "@modelcontextprotocol/server";
import { packageVersion } from "../../internal/package-version.js";
import type { CredentialRefusal, Principal, ServerContext } from "../context.js";
import { type RouteHandler, readBodyText } from "../http.js";
import type { McpEndpointOptions, McpEra } from "../options.js";
import { authenticateBearer, insufficientScopeChallenge, rateLimitKey } from "../v2-api.js";
import { ChatTasks, TASKS_EXTENSION, taskRequestOf, withoutTaskRequest } from "./chat-tasks.js";
import { integrationSkills } from "./integration-skill.js";
import { registerPreviewApp } from "./preview-app.js";
import { createRequestStates, type RequestStates } from "./request-state.js";
import type { ResolveState } from "./resolve-elicitation.js";
import {
  DEFAULT_MAX_SESSIONS_PER_CREDENTIAL,
  DEFAULT_SESSION_IDLE_MS,
  jsonRpcErrorResponse,
  McpSessions,
} from "./sessions.js";
import {
  type ChatTools,
  registerChatTools,
  SERVER_INSTRUCTIONS,
  setWriteToolsEnabled,
  TOOL_SCOPES,
} from "./tools.js";

export type { McpEndpointOptions, McpEra } from "../options.js";

export const SERVER_INFO = { name: "chat-reference-server", version: packageVersion() };

/** Scopes a `/mcp` token carries when the test-only switch stands in for sign-in. */
const ALL_CHAT_SCOPES = ["chat:read", "chat:write"];
const LOOPBACK_HOSTNAMES = ["localhost", "127.0.0.1", "[::1]"];
/** JSON-RPC bodies above 4 MiB are refused with 413. */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;
/**
 * `server/discover` and `tools/list` are the same for every caller and change only with a new server version:
 * clients and shared caches may keep them for five minutes.
 */
export const MCP_CACHE_TTL_MS = 5 * 60 * 1000;

export function createMcpRoutes(ctx: ServerContext) {
  const options = ctx.options as McpEndpointOptions;
  const era: McpEra = options.mcpEra ?? "both";
  if (!["both", "modern", "legacy"].includes(era)) {
    throw new TypeError(`mcpEra must be "both", "modern" or "legacy" (got ${JSON.stringify(era)})`);
  }
  const states = createRequestStates<ResolveState>(randomBytes(32));
  const skills = integrationSkills();
  const tasks = new ChatTasks(ctx.options.assistantDelayMs);
  let readOnly = false;
  /** The chat tools of each server built (one per legacy session, one per modern request), to withdraw them. */
  const chatToolsOf = new WeakMap<McpServer, ChatTools>();
  const buildServer = () => {
    const { server, tools } = buildMcpServer(ctx, states);
    skills.attach(server);
    tasks.register(server);
    if (readOnly) setWriteToolsEnabled(tools, false);
    chatToolsOf.set(server, tools);
    return server;
  };
  const sessions = new McpSessions({
    createServer: buildServer,
    idleMs: options.mcpSessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
    maxPerCredential: options.mcpMaxSessionsPerCredential ?? DEFAULT_MAX_SESSIONS_PER_CREDENTIAL,
    ...(options.mcpMaxSessionsPerUser !== undefined ? { maxPerUser: options.mcpMaxSessionsPerUser } : {}),
    ...(options.mcpMaxSessionsPerClient !== undefined
      ? { maxPerUserClient: options.mcpMaxSessionsPerClient }
      : {}),
  });
  const modern: McpHttpHandler = createMcpHandler(buildServer, {
    legacy: "reject",
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
    onerror: (error) => {
      if (!isClientMistake(error)) console.error("reference server: MCP request failed:", error);
    },
  });

  const allowedHostnames = [
    ...new Set([...LOOPBACK_HOSTNAMES, new URL(ctx.baseUrl).hostname, ...(options.mcpAllowedHosts ?? [])]),
  ];
  // RFC 9728 metadata of `/mcp` (served by the OAuth part).
  const metadataUrl = `${ctx.baseUrl}/.well-known/oauth-protected-resource/mcp`;
  const testOnlyPrincipal = testOnlyUnauthenticated(ctx, options.testOnlyUnauthenticatedMcpAccount);

  const handle: RouteHandler = async (request, info) => {
    if (info.url.pathname !== "/mcp") return undefined;
    const hostProblem = hostProblemOf(request, allowedHostnames);
    if (hostProblem) return hostProblem;
    const origin = request.headers.get("origin");
    const cors = origin === null ? undefined : corsHeadersFor(origin, allowedHostnames);
    if (origin !== null && !cors) return jsonRpcErrorResponse(403, -32000, "Invalid Origin");
    const answer = await serve(request);
    if (!cors) return answer;
    const headers = new Headers(answer.headers);
    for (const [name, value] of Object.entries(cors)) headers.set(name, value);
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
  };

  async function serve(request: Request): Promise<Response> {
    if (request.method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-methods": "GET, POST, DELETE",
          "access-control-allow-headers":
            "authorization, dpop, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name, mcp-param-chatid",
          "access-control-max-age": "600",
        },
      });
    }
    const auth =
      testOnlyPrincipal && request.headers.get("authorization") === null
        ? { principal: testOnlyPrincipal }
        : await authenticateMcp(ctx, request, metadataUrl);
    if ("refusal" in auth) return unauthorized(auth.refusal.description, metadataUrl, auth.refusal);
    if ("problem" in auth) return unauthorized(auth.problem, metadataUrl);
    const { principal } = auth;
    const authInfo = toAuthInfo(request.headers.get("authorization") ?? "", principal);

    let body: unknown;
    if (request.method === "POST") {
      const read = await readJsonBody(request);
      if (read instanceof Response) return read;
      body = read;
      const refused = missingToolScope(body, principal.scopes);
      if (refused) {
        return jsonRpcErrorResponse(
          403,
          -32001,
          `insufficient_scope: ${refused.tool} needs the ${refused.scope} scope`,
          { "www-authenticate": insufficientScopeChallenge(refused.scope, metadataUrl) },
        );
      }
    }
    const legacy =
      era === "legacy" ||
      (era === "both" && (await isLegacyRequest(request, body, { maxRequestBodySize: MAX_MCP_BODY_BYTES })));
    if (
      legacy &&
      request.method !== "POST" &&
      request.headers.get("mcp-session-id") === null &&
      era === "both"
    ) {
      // A GET or DELETE without a session is no 2025 session operation: the modern era has neither (405).
      return modernOnlyMethod();
    }
    const asked = request.method === "POST" ? taskRequestOf(body, legacy) : undefined;
    if (asked && (!legacy || request.headers.get("mcp-session-id") !== null)) {
      return startTask(request, body as Record<string, unknown>, asked.era, principal, authInfo);
    }
    if (legacy) return sessions.handle(request, principal, authInfo, body);
    if (request.method !== "POST") return modernOnlyMethod();
    return modern.fetch(request, { authInfo, parsedBody: body });
  }

  /**
   * A long call for a host that declared tasks: the task is created and answered at once, and the same call,
   * without the task, runs through the SDK's handler of its era behind it (every check of a call applies there).
   */
  function startTask(
    request: Request,
    body: Record<string, unknown>,
    taskEra: "legacy" | "modern",
    principal: Principal,
    authInfo: AuthInfo,
  ): Response {
    const plain = withoutTaskRequest(body);
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    const task = tasks.start(
      principal,
      (signal) => {
        const again = new Request(request.url, {
          method: "POST",
          headers,
          body: JSON.stringify(plain),
          signal,
        });
        return taskEra === "legacy"
          ? sessions.handle(again, principal, authInfo, plain)
          : modern.fetch(again, { authInfo, parsedBody: plain });
      },
      body.id,
    );
    const result =
      taskEra === "modern" ? { resultType: "task", ...tasks.modern(task) } : { task: tasks.legacy(task) };
    return Response.json({ jsonrpc: "2.0", id: body.id, result });
  }

  return {
    handle,
    toolsChanged: () => {
      modern.notify.toolsChanged();
      for (const server of sessions.servers()) void server.sendToolListChanged();
    },
    setReadOnly: (value: boolean) => {
      if (value === readOnly) return;
      readOnly = value;
      // A connected session's server announces its own change; modern listeners hear it through the bus.
      for (const server of sessions.servers()) {
        const tools = chatToolsOf.get(server);
        if (tools) setWriteToolsEnabled(tools, !readOnly);
      }
      modern.notify.toolsChanged();
    },
    close: async () => {
      tasks.close();
      await modern.close();
      await sessions.closeAll();
    },
  };
}

function buildMcpServer(
  ctx: ServerContext,
  states: RequestStates<ResolveState>,
): { server: McpServer; tools: ChatTools } {
  const server = new McpServer(SERVER_INFO, {
    instructions: SERVER_INSTRUCTIONS,
    capabilities: {
      tools: { listChanged: true },
      // 2025-11-25 core tasks (the 2026-07-28 codec drops this member) and the 2026-07-28 Tasks extension.
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      extensions: { [TASKS_EXTENSION]: {} },
    },
    cacheHints: {
      "server/discover": { ttlMs: MCP_CACHE_TTL_MS, cacheScope: "public" },
      "tools/list": { ttlMs: MCP_CACHE_TTL_MS, cacheScope: "public" },
    },
    requestState: { verify: states.verify },
    // Withdrawing three tools at once is one change of the list: one notification, not three.
    debouncedNotificationMethods: ["notifications/tools/list_changed"],
  });
  const tools = registerChatTools(server, { service: ctx.service, sso: ctx.sso, states });
  registerPreviewApp(server, ctx.baseUrl);
  return { server, tools };
}

function modernOnlyMethod(): Response {
  return jsonRpcErrorResponse(405, -32000, "Method not allowed: MCP 2026-07-28 is served by POST only", {
    allow: "POST",
  });
}

/** Only OAuth access tokens of this server, issued for `/mcp` or for no particular resource (never API keys). */
async function authenticateMcp(
  ctx: ServerContext,
  request: Request,
  metadataUrl: string,
): Promise<{ principal: Principal } | { problem: string } | { refusal: CredentialRefusal }> {
  // A token's expiry by the OAuth server's clock, which issued it (`oauthNow` in tests).
  const now = ctx.options.oauthNow ?? Date.now;
  const auth = await authenticateBearer(
    request.headers.get("authorization"),
    ctx.tokenVerifiers,
    now() / 1000,
  );
  if ("problem" in auth) {
    return {
      problem:
        auth.problem === "missing"
          ? "Missing Authorization header"
          : "The access token is invalid, expired or revoked",
    };
  }
  if (auth.principal.via !== "oauth")
    return { problem: "API keys are not accepted on /mcp: connect through OAuth" };
  if (auth.principal.resource && auth.principal.resource !== `${ctx.baseUrl}/mcp`) {
    return { problem: "The access token was issued for another resource" };
  }
  // The cheap per-credential limit before the proof's verification, as on /v2 (one bucket per credential).
  const decision = ctx.rateLimiter?.take(rateLimitKey(auth.principal));
  if (decision && !decision.allowed) {
    return {
      refusal: {
        error: "rate_limited",
        description: "retry after the number of seconds in Retry-After",
        wwwAuthenticate: "",
        headers: { "retry-after": String(decision.retryAfterSeconds) },
        status: 429,
      },
    };
  }
  const verdict = await ctx.credentialCheck?.({
    ...auth,
    proof: request.headers.get("dpop"),
    method: request.method,
    url: `${ctx.baseUrl}/mcp`,
    resourceMetadataUrl: metadataUrl,
  });
  if (verdict && "refusal" in verdict) return verdict;
  // The token, its resource and the rate passed: the proof is used now.
  const refusal = verdict?.spend();
  return refusal ? { refusal } : auth;
}

function unauthorized(description: string, metadataUrl: string, refusal?: CredentialRefusal): Response {
  if (refusal?.status === 429) {
    return jsonRpcErrorResponse(429, -32000, `Too many requests: ${description}`, refusal.headers);
  }
  return new Response(
    JSON.stringify({ error: refusal?.error ?? "invalid_token", error_description: description }),
    {
      status: 401,
      headers: {
        "content-type": "application/json",
        "cache-control": "no-store",
        ...refusal?.headers,
        "www-authenticate":
          refusal?.wwwAuthenticate ??
          `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadataUrl}"`,
      },
    },
  );
}

function toAuthInfo(token: string, principal: Principal): AuthInfo {
  return {
    token,
    clientId: principal.clientId ?? "",
    scopes: principal.scopes,
    expiresAt: principal.expiresAt ?? Math.floor(Date.now() / 1000) + 3600,
    extra: { principal },
  };
}

/** The parsed JSON-RPC body, or the error response: 413 past the cap, 415 for another media type, -32700 for bad JSON. */
async function readJsonBody(request: Request): Promise<unknown | Response> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    return jsonRpcErrorResponse(415, -32000, "Unsupported Media Type: Content-Type must be application/json");
  }
  let text: string | undefined;
  try {
    text = await readBodyText(request, MAX_MCP_BODY_BYTES);
  } catch (error) {
    if ((error as { code?: string }).code === "payload_too_large") {
      return jsonRpcErrorResponse(413, -32600, "The request body is too large");
    }
    return jsonRpcErrorResponse(400, -32600, "The request body could not be read");
  }
  try {
    return JSON.parse(text ?? "");
  } catch {
    return jsonRpcErrorResponse(400, -32700, "Parse error: invalid JSON");
  }
}

/**
 * A `tools/call` of a tool whose scope the token lacks is answered 403 `insufficient_scope` with the
 * `WWW-Authenticate` challenge naming the scope, so a client can step up (the MCP authorization spec's step-up).
 */
function missingToolScope(
  body: unknown,
  granted: readonly string[],
): { tool: string; scope: string } | undefined {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    const call = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (call?.method !== "tools/call" || typeof call.params?.name !== "string") continue;
    const scope = TOOL_SCOPES[call.params.name as keyof typeof TOOL_SCOPES];
    if (scope && !granted.includes(scope)) return { tool: call.params.name, scope };
  }
  return undefined;
}

/** 403 for a `Host` that is not ours (DNS rebinding); undefined when it is. */
function hostProblemOf(request: Request, allowedHostnames: readonly string[]): Response | undefined {
  const host = request.headers.get("host");
  if (host === null) return jsonRpcErrorResponse(403, -32000, "Missing Host header");
  const hostname = URL.canParse(`http://${host}`) ? new URL(`http://${host}`).hostname : null;
  if (hostname !== null && allowedHostnames.includes(hostname)) return undefined;
  return jsonRpcErrorResponse(403, -32000, `Invalid Host header: ${JSON.stringify(host.slice(0, 100))}`);
}

/** CORS headers for an allowed browser `Origin` (loopback MCP clients), undefined for a foreign one. */
function corsHeadersFor(
  origin: string,
  allowedHostnames: readonly string[],
): Record<string, string> | undefined {
  const hostname = URL.canParse(origin) ? new URL(origin).hostname : null;
  if (hostname === null || !allowedHostnames.includes(hostname)) return undefined;
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": "mcp-session-id, mcp-protocol-version, www-authenticate, dpop-nonce",
    vary: "Origin",
  };
}

/** The test-only switch: no `Authorization` header means the configured account. */
function testOnlyUnauthenticated(ctx: ServerContext, account: string | undefined): Principal | undefined {
  if (account === undefined) return undefined;
  if (!ctx.accounts.has(account)) {
    throw new Error(`testOnlyUnauthenticatedMcpAccount: no account or team "${account}".`);
  }
  console.warn(`reference server: TEST ONLY: /mcp accepts unauthenticated requests as "${account}".`);
  return {
    account,
    subject: `test-only-unauthenticated:${account}`,
    via: "oauth",
    clientId: "test-only-unauthenticated",
    scopes: [...ALL_CHAT_SCOPES],
  };
}

/** Errors the SDK reports for requests it refused (the client's mistake, already answered): not worth a log line. */
function isClientMistake(error: Error): boolean {
  return /rejected|invalid|unsupported|mismatch|not allowed|parse/i.test(error.message);
}
