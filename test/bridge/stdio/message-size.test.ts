import { describe, expect, it } from "vitest";
import { jsonShapeProblem, TOO_DEEP } from "../../../src/bridge/messages/message-size.js";

const nestedTooDeep = (text: string) => jsonShapeProblem(text) === TOO_DEEP;
const MiB = 1024 * 1024;

import { TopLevelFieldScanner } from "../../../src/bridge/stdio/line-splitter.js";

const fieldsOf = (line: string, pieceBytes = 3) => {
  const scanner = new TopLevelFieldScanner();
  const bytes = Buffer.from(line);
  for (let start = 0; start < bytes.length; start += pieceBytes)
    scanner.push(bytes.subarray(start, start + pieceBytes));
  return scanner.fields();
};

describe("the nesting check before JSON.parse", () => {
  it("refuses a text nested deeper than the limit, counting brackets outside strings only", () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(nestedTooDeep(nested(1000))).toBe(false);
    expect(nestedTooDeep(nested(1001))).toBe(true);
    expect(nestedTooDeep(`["${"[".repeat(5000)}"]`)).toBe(false);
    // An escaped quote does not end the string; an escaped backslash before a quote does.
    expect(nestedTooDeep(`["\\"${"[".repeat(5000)}"]`)).toBe(false);
    expect(nestedTooDeep(`["\\\\"${"[".repeat(1001)}`)).toBe(true);
  });

  it("refuses two million levels in one pass, where parsing them overflows the stack", () => {
    expect(nestedTooDeep(`${"[".repeat(2_000_000)}${"]".repeat(2_000_000)}`)).toBe(true);
  });
});

describe("the count of arrays and objects before JSON.parse: one per 64 bytes of the cap", () => {
  it("refuses more than maxBytes / 64 of them, outside strings only, and names the flag", () => {
    const objects = (count: number) => `[${"{},".repeat(count - 2)}{}]`;
    expect(jsonShapeProblem(objects(16_384), MiB)).toBeUndefined();
    expect(jsonShapeProblem(objects(16_385), MiB)).toMatch(
      /more than 16384 arrays and objects.*--max-message-size/,
    );
    expect(jsonShapeProblem(`["${"{".repeat(100_000)}"]`, MiB)).toBeUndefined();
    // A larger cap allows more.
    expect(jsonShapeProblem(objects(16_385), 2 * MiB)).toBeUndefined();
  });
});

describe("the id of a line too long to keep", () => {
  it("is read from the line's own members, wherever they stand, never from params", () => {
    expect(fieldsOf('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":9}}')).toEqual({
      id: 7,
      hasMethod: true,
    });
    expect(
      fieldsOf('{"method":"tools/call","params":{"id":"x","a":[{"id":1}]},"jsonrpc":"2.0","id":"req-1"}'),
    ).toEqual({ id: "req-1", hasMethod: true });
    expect(fieldsOf('{ "id" : "a\\"b" , "method" : "x" }')).toEqual({ id: 'a"b', hasMethod: true });
    expect(fieldsOf('{"method":"notifications/x","params":{"id":3}}')).toEqual({ hasMethod: true });
    expect(fieldsOf("xxxxxxxx")).toEqual({ hasMethod: false });
  });
});
