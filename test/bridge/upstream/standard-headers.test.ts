/** The 2026-07-28 standard headers: x-mcp-header validation, Mcp-Param-* extraction and the Base64 sentinel. */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  withEnvelope,
  withoutEnvelope,
} from "../../../src/bridge/messages/request-model.js";
import {
  encodeHeaderValue,
  paramHeadersOf,
  standardHeaders,
} from "../../../src/bridge/upstream/standard-headers.js";

describe("the request model's envelope keys", () => {
  it("are the SDK's", () => {
    expect([
      META_PROTOCOL_VERSION,
      META_CLIENT_INFO,
      META_CLIENT_CAPABILITIES,
      META_LOG_LEVEL,
      META_SERVER_INFO,
    ]).toEqual([
      PROTOCOL_VERSION_META_KEY,
      CLIENT_INFO_META_KEY,
      CLIENT_CAPABILITIES_META_KEY,
      LOG_LEVEL_META_KEY,
      SERVER_INFO_META_KEY,
    ]);
  });

  it("are stamped and lifted without touching other _meta keys", () => {
    const client = {
      era: "legacy" as const,
      protocolVersion: "2025-11-25",
      capabilities: { roots: {} },
      clientInfo: { name: "c", version: "1" },
    };
    const stamped = withEnvelope({ name: "t", _meta: { progressToken: 5 } }, client, "2026-07-28");
    expect(stamped._meta).toEqual({
      progressToken: 5,
      [META_PROTOCOL_VERSION]: "2026-07-28",
      [META_CLIENT_INFO]: { name: "c", version: "1" },
      [META_CLIENT_CAPABILITIES]: { roots: {} },
    });
    expect(withoutEnvelope(stamped)).toEqual({ name: "t", _meta: { progressToken: 5 } });
  });
});

describe("x-mcp-header annotations", () => {
  it("finds annotated primitives reachable through properties, nested ones included", () => {
    const checked = paramHeadersOf({
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        where: { type: "object", properties: { zone: { type: "integer", "x-mcp-header": "Zone" } } },
      },
    });
    expect(checked).toEqual({
      headers: [
        { name: "Region", path: ["region"] },
        { name: "Zone", path: ["where", "zone"] },
      ],
    });
  });

  it.each([
    ["a number", { properties: { n: { type: "number", "x-mcp-header": "N" } } }],
    ["an empty name", { properties: { n: { type: "string", "x-mcp-header": "" } } }],
    ["a name with a space", { properties: { n: { type: "string", "x-mcp-header": "A B" } } }],
    [
      "a duplicate (case-insensitive)",
      {
        properties: {
          a: { type: "string", "x-mcp-header": "Id" },
          b: { type: "string", "x-mcp-header": "ID" },
        },
      },
    ],
    [
      "an array item",
      { properties: { list: { type: "array", items: { type: "string", "x-mcp-header": "L" } } } },
    ],
    ["a oneOf branch", { oneOf: [{ properties: { x: { type: "string", "x-mcp-header": "X" } } }] }],
  ])("rejects the tool for %s", (_, schema) => {
    expect(paramHeadersOf(schema)).toHaveProperty("invalid");
  });
});

describe("standard headers of a request", () => {
  it("names the method, the tool and each annotated argument, encoded as the spec says", () => {
    const headers = standardHeaders(
      "tools/call",
      { name: "execute_sql", arguments: { region: "us-west1", flag: true, count: -7, text: " padded " } },
      [
        { name: "Region", path: ["region"] },
        { name: "Flag", path: ["flag"] },
        { name: "Count", path: ["count"] },
        { name: "Text", path: ["text"] },
        { name: "Missing", path: ["absent"] },
      ],
    );
    expect(headers).toEqual({
      "mcp-method": "tools/call",
      "mcp-name": "execute_sql",
      "mcp-param-region": "us-west1",
      "mcp-param-flag": "true",
      "mcp-param-count": "-7",
      "mcp-param-text": "=?base64?IHBhZGRlZCA=?=",
    });
    expect(standardHeaders("resources/read", { uri: "file:///a b" })["mcp-name"]).toBe("file:///a b");
    expect(standardHeaders("tools/list", {})).toEqual({ "mcp-method": "tools/list" });
  });

  it.each([
    ["tools/call", { name: "get_chat" }, "get_chat"],
    ["prompts/get", { name: "review" }, "review"],
    ["resources/read", { uri: "ui://chat/preview.html" }, "ui://chat/preview.html"],
    ["tasks/get", { taskId: "t-1" }, "t-1"],
    ["tasks/update", { taskId: "t-2", inputResponses: {} }, "t-2"],
    ["tasks/cancel", { taskId: "t-3" }, "t-3"],
  ])("%s carries Mcp-Name from its body, as the spec's table says", (method, params, name) => {
    expect(standardHeaders(method, params)).toEqual({ "mcp-method": method, "mcp-name": name });
  });

  it("names nothing for methods off the table, nor for a field of the wrong type", () => {
    expect(standardHeaders("skills/list", { name: "x" })).toEqual({ "mcp-method": "skills/list" });
    expect(standardHeaders("tasks/get", { taskId: 7 })).toEqual({ "mcp-method": "tasks/get" });
    expect(standardHeaders("constructor", { name: "x" })).toEqual({ "mcp-method": "constructor" });
  });

  it.each([
    ["us-west1", "us-west1"],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="],
  ])("encodes %j as %s", (value, encoded) => {
    expect(encodeHeaderValue(value)).toBe(encoded);
  });
});
