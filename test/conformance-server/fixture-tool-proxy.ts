/**
 * A loopback proxy in front of `/mcp` that answers for a fixture tool of the conformance suite with one of our tools:
 * a `tools/call` of `fixture` (and its `Mcp-Name` header) becomes a call of `tool` with `args`, everything else passes
 * through unchanged, streams included. It lets a scenario whose checks apply to our tools run against them.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

export interface FixtureAlias {
  fixture: string;
  tool: string;
  args: Record<string, unknown>;
}

/** A request body the suite sends is small; anything larger is refused. */
const MAX_BODY_BYTES = 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The body with the fixture's call renamed, or unchanged when it is anything else. */
function aliased(body: Buffer, alias: FixtureAlias): { body: Buffer; renamed: boolean } {
  let message: unknown;
  try {
    message = JSON.parse(body.toString("utf8"));
  } catch {
    return { body, renamed: false };
  }
  const call = message as { method?: unknown; params?: { name?: unknown; arguments?: unknown } };
  if (call?.method !== "tools/call" || call.params?.name !== alias.fixture) return { body, renamed: false };
  const params = { ...call.params, name: alias.tool, arguments: alias.args };
  return { body: Buffer.from(JSON.stringify({ ...call, params })), renamed: true };
}

export async function startFixtureToolProxy(
  upstream: string,
  alias: FixtureAlias,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    void (async () => {
      const raw = req.method === "POST" ? await readBody(req) : undefined;
      const { body, renamed } = raw ? aliased(raw, alias) : { body: undefined, renamed: false };
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (["host", "content-length", "connection"].includes(name) || value === undefined) continue;
        headers.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
      if (renamed && headers.has("mcp-name")) headers.set("mcp-name", alias.tool);
      const abort = new AbortController();
      res.once("close", () => abort.abort());
      const response = await fetch(new URL(req.url ?? "/", target), {
        method: req.method ?? "GET",
        headers,
        ...(body ? { body: new Uint8Array(body) } : {}),
        signal: abort.signal,
      });
      const answerHeaders: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        answerHeaders[name] = value;
      });
      res.writeHead(response.status, answerHeaders);
      if (response.body) Readable.fromWeb(response.body as never).pipe(res);
      else res.end();
    })().catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
