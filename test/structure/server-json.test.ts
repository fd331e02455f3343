/** server.json, the MCP Registry's entry for the bridge: valid against the registry's schema and true to the package. */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ENVIRONMENT_HELP } from "../../src/bridge/command/arguments.js";

const root = join(import.meta.dirname, "..", "..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** The 2025-12-11 schema as the registry publishes it (scripts/schemas/README.md says where it comes from). */
const SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
const SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0";
const schemaText = read("scripts/schemas/server.schema.json");

const ArgumentSchema = z.looseObject({
  type: z.enum(["named", "positional"]),
  name: z.string().optional(),
  choices: z.array(z.string()).optional(),
  default: z.string().optional(),
  isSecret: z.boolean().optional(),
});
const ServerJsonSchema = z.looseObject({
  $schema: z.string(),
  name: z.string(),
  version: z.string(),
  repository: z.looseObject({ url: z.string(), source: z.string() }),
  packages: z.array(
    z.looseObject({
      registryType: z.string(),
      identifier: z.string(),
      version: z.string(),
      transport: z.looseObject({ type: z.string() }),
      packageArguments: z.array(ArgumentSchema),
      environmentVariables: z.array(z.looseObject({ name: z.string(), isSecret: z.boolean().optional() })),
    }),
  ),
});
const PackageJsonSchema = z.looseObject({
  name: z.string(),
  version: z.string(),
  mcpName: z.string(),
  repository: z.looseObject({ url: z.string() }),
});

const serverJsonText = read("server.json");
const server = ServerJsonSchema.parse(JSON.parse(serverJsonText));
const pkg = PackageJsonSchema.parse(JSON.parse(read("package.json")));
const npmEntry = server.packages.find((entry) => entry.registryType === "npm");

/**
 * A validator of the kept schema: draft-07 with its formats checked. Not in ajv's strict mode, which refuses the schema
 * itself (its OpenAPI `example` keywords, a `required` name defined in a sibling schema).
 */
function registryValidator() {
  const ajv = new Ajv({ allErrors: true, strict: false });
  // ajv-formats is CommonJS: its plugin is module.exports and, the same function, its `default`.
  addFormats.default(ajv);
  return ajv.compile(JSON.parse(schemaText));
}
const validate = registryValidator();
const errorsOf = (candidate: unknown) =>
  validate(candidate) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);

describe("the kept schema", () => {
  it("is the registry's 2025-12-11 server.json schema byte for byte, and server.json names it", () => {
    expect(createHash("sha256").update(schemaText).digest("hex")).toBe(SCHEMA_SHA256);
    expect(JSON.parse(schemaText).$id).toBe(SCHEMA_URL);
    expect(server.$schema).toBe(SCHEMA_URL);
  });
});

describe("server.json against the registry's schema", () => {
  it("is valid", () => {
    expect(errorsOf(JSON.parse(serverJsonText))).toEqual([]);
  });

  it("would be refused with a description over 100 characters, a version range or a positional without a hint", () => {
    const broken = (change: (json: Record<string, unknown>) => void) => {
      const json = JSON.parse(serverJsonText);
      change(json);
      return errorsOf(json);
    };
    expect(broken((json) => Object.assign(json, { description: "x".repeat(101) }))).not.toEqual([]);
    expect(
      broken((json) => Object.assign((json.packages as object[])[0]!, { version: "latest" })),
    ).not.toEqual([]);
    expect(
      broken((json) => {
        const args = (json.packages as { packageArguments: object[] }[])[0]!.packageArguments;
        args.push({ type: "positional", description: "no hint, no value" });
      }),
    ).not.toEqual([]);
  });
});

describe("server.json describes this package", () => {
  it("is the npm package of this version, over stdio, under the name package.json's mcpName gives", () => {
    // The registry proves the npm package is ours by reading its mcpName: the two names must be one.
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(npmEntry).toMatchObject({
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: "stdio" },
    });
    const repo = (url: string) => url.replace(/^git\+/, "").replace(/\.git$/, "");
    expect(repo(server.repository.url)).toBe(repo(pkg.repository.url));
  });

  it("names only flags the bridge has, with its choices, and the MCP URL last", () => {
    const cli = read("src/bridge/command/arguments.ts");
    const args = npmEntry?.packageArguments ?? [];
    const unknown = args
      .filter((arg) => arg.type === "named")
      .map((arg) => arg.name ?? "")
      .filter((flag) => !new RegExp(`["']${flag}[ "']`).test(cli));
    expect(unknown).toEqual([]);
    expect(args.find((arg) => arg.name === "--token-store")?.choices).toEqual(["auto", "keychain", "file"]);
    expect(cli).toMatch(/\.choices\(\["auto", "keychain", "file"\]\)\s*\.default\("auto"\)/);
    expect(args.at(-1)).toMatchObject({ type: "positional", valueHint: "mcp_url", isRequired: true });
    expect(args.filter((arg) => arg.type === "positional")).toHaveLength(1);
  });

  it("lists the environment `chat-mcp-bridge --help` lists (the URL is the argument), secrets marked secret", () => {
    const helped = [...ENVIRONMENT_HELP.matchAll(/^ {2}([A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*)/gm)].flatMap(
      ([, names]) => names!.split(", "),
    );
    expect(helped).toContain("CHAT_MCP_CLIENT_SECRET");
    const listed = (npmEntry?.environmentVariables ?? []).map((variable) => variable.name);
    expect([...listed].sort()).toEqual(helped.filter((name) => name !== "CHAT_MCP_URL").sort());
    const secrets = (npmEntry?.environmentVariables ?? []).filter((variable) => variable.isSecret);
    expect(secrets.map((variable) => variable.name).sort()).toEqual(
      listed.filter((name) => name.endsWith("_SECRET")).sort(),
    );
  });
});
