/** JSON-RPC error responses that `/mcp` answers before a request reaches an MCP server instance. */

/** `{ jsonrpc: "2.0", error: { code, message }, id: null }` with an HTTP status. */
export function jsonRpcErrorResponse(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}
