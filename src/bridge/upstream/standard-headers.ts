/** The 2026-07-28 standard request headers: `Mcp-Method`, `Mcp-Name`, and `Mcp-Param-*` mirrored from `x-mcp-header` annotations. */
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";

/** One annotated parameter of a tool: the header's name part and the chain of `properties` keys to its value. */
export interface ParamHeader {
  name: string;
  path: string[];
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE_TYPES = new Set(["string", "integer", "boolean"]);
/** Keywords under which an annotation is not statically reachable (arrays, composition, conditionals, references). */
const UNREACHABLE_KEYWORDS = [
  "items",
  "prefixItems",
  "additionalProperties",
  "patternProperties",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
  "dependentSchemas",
];

/** The `x-mcp-header` parameters of a tool's input schema, or why the spec's constraints make the tool invalid. */
export function paramHeadersOf(inputSchema: unknown): { headers: ParamHeader[] } | { invalid: string } {
  const headers: ParamHeader[] = [];
  const seen = new Set<string>();
  const visit = (schema: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isObject(schema)) return undefined;
    if ("x-mcp-header" in schema) {
      const name = schema["x-mcp-header"];
      if (!reachable || path.length === 0)
        return `x-mcp-header on a value not reachable through "properties" alone (${path.join(".") || "the root"})`;
      if (typeof name !== "string" || !TOKEN.test(name))
        return `x-mcp-header ${JSON.stringify(name)} at ${path.join(".")} is not an HTTP token`;
      if (seen.has(name.toLowerCase())) return `x-mcp-header "${name}" appears twice`;
      if (typeof schema.type !== "string" || !PRIMITIVE_TYPES.has(schema.type))
        return `x-mcp-header "${name}" is on a parameter of type ${JSON.stringify(schema.type)}, not string, integer or boolean`;
      seen.add(name.toLowerCase());
      headers.push({ name, path });
    }
    if (isObject(schema.properties)) {
      for (const [key, child] of Object.entries(schema.properties)) {
        const problem = visit(child, [...path, key], reachable);
        if (problem) return problem;
      }
    }
    for (const keyword of UNREACHABLE_KEYWORDS) {
      const nested = schema[keyword];
      const children = Array.isArray(nested) ? nested : isObject(nested) ? [nested] : [];
      const many = keyword === "$defs" || keyword === "definitions" || keyword === "patternProperties";
      for (const child of many && isObject(nested) ? Object.values(nested) : children) {
        const problem = visit(child, path, false);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  const problem = visit(inputSchema, [], true);
  return problem ? { invalid: problem } : { headers };
}

const PLAIN_HEADER_VALUE = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;

/** A header value as the spec encodes it: plain visible ASCII as is, anything else as `=?base64?...?=`. */
export function encodeHeaderValue(value: string): string {
  if (PLAIN_HEADER_VALUE.test(value) && !value.startsWith("=?base64?")) return value;
  return `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

/** The value of one annotated parameter in the call's arguments, as header text; undefined when absent. */
function paramValue(args: unknown, path: string[]): string | undefined {
  let value: unknown = args;
  for (const key of path) {
    if (!isObject(value) || !(key in value)) return undefined;
    value = value[key];
  }
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** The methods whose `Mcp-Name` mirrors a body field (SEP-2243, and SEP-2663's tasks): the SDK's `MCP_NAME_HEADER_SOURCE`. */
const MCP_NAME_SOURCE: Readonly<Record<string, "name" | "uri" | "taskId">> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

/** The standard headers of one modern request (names lower-case). */
export function standardHeaders(
  method: string,
  params: Json | undefined,
  paramHeaders: readonly ParamHeader[] = [],
): Record<string, string> {
  const headers: Record<string, string> = { "mcp-method": method };
  const field = Object.hasOwn(MCP_NAME_SOURCE, method) ? MCP_NAME_SOURCE[method] : undefined;
  const name = field === undefined ? undefined : params?.[field];
  if (typeof name === "string") headers["mcp-name"] = encodeHeaderValue(name);
  if (method === "tools/call") {
    for (const header of paramHeaders) {
      const value = paramValue(params?.arguments, header.path);
      if (value !== undefined) headers[`mcp-param-${header.name.toLowerCase()}`] = encodeHeaderValue(value);
    }
  }
  return headers;
}
