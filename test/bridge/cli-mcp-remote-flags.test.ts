/** mcp-remote's sign-in and header flags on the bridge's command line, parsed without spawning: --header-file, --authorize-param, --disable-resource-parameter, --static-oauth-client-metadata. */
import { chmodSync, chownSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseBridgeArgs, UsageError } from "../../src/bridge/command/arguments.js";
import { bridgeLoginCommand } from "../../src/bridge/sign-in/oauth.js";
import { scratchDir } from "../support/scratch-dir.js";

const argv = (...args: string[]) => ["node", "chat-mcp-bridge", ...args];
const quiet = () => {};
const URL_ARG = "https://chat.example.com/mcp";
/** `${NAME}`, the reference the header file expands (written so it reads as the literal users type). */
const envRef = (name: string) => `\${${name}}`;
const unix = process.platform !== "win32";
const isRoot = process.getuid?.() === 0;

/** A header file with `text`, mode `mode`. */
function headerFile(text: string, mode = 0o600): string {
  const path = join(scratchDir("cmb-header-file-"), "headers");
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

function usageErrorOf(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error("no usage error");
}

describe("--header-file <path>", () => {
  it(`reads one "Name: value" a line, skips comments and blank lines, expands ${envRef("ENV")}, after --header's`, () => {
    const path = headerFile(
      `# the team's gateway\n\nAuthorization: Bearer ${envRef("TOKEN")}\r\n  X-Team :  acme  \n# X-Off: 1\n`,
    );
    for (const kind of ["relay", "login", "logout", "doctor"] as const) {
      const words = kind === "relay" ? [] : [kind];
      const command = parseBridgeArgs(
        argv(...words, "--header", "X-First: 1", "--header-file", path, URL_ARG),
        { TOKEN: "s3cret-from-env" },
        quiet,
      );
      expect(command.kind).toBe(kind);
      expect(command.options.headers).toEqual([
        { name: "X-First", value: "1" },
        { name: "Authorization", value: "Bearer s3cret-from-env", file: path },
        { name: "X-Team", value: "acme", file: path },
      ]);
    }
  });

  it("given before a subcommand's name, it still counts", () => {
    const path = headerFile("X-A: 1\n");
    const command = parseBridgeArgs(argv("--header-file", path, "login", URL_ARG), {}, quiet);
    expect(command.options.headers).toEqual([{ name: "X-A", value: "1", file: path }]);
  });

  it("the login command the bridge tells names the file (its header names are part of the login)", () => {
    const path = headerFile("X-A: 1\nX-B: 2\n");
    const command = parseBridgeArgs(argv("--header-file", path, URL_ARG), {}, quiet);
    if (command.kind !== "relay") throw new Error("not the relay");
    const login = bridgeLoginCommand(command.options, {}, ["node", "chat-mcp-bridge"]);
    expect(login).toBe(`chat-mcp-bridge login --header-file ${path} ${URL_ARG}`);
    const both = parseBridgeArgs(argv("--header", "X-C: 3", "--header-file", path, URL_ARG), {}, quiet);
    if (both.kind !== "relay") throw new Error("not the relay");
    expect(bridgeLoginCommand(both.options, {}, ["node", "chat-mcp-bridge"])).toBe(
      `chat-mcp-bridge login --header-file ${path} (your --header options) ${URL_ARG}`,
    );
  });

  it("an unset variable is reported by name only", () => {
    const warnings: string[] = [];
    const path = headerFile(`X-A: ${envRef("NOPE")}\n`);
    parseBridgeArgs(argv("--header-file", path, URL_ARG), {}, (text) => warnings.push(text));
    expect(warnings.join("")).toContain(envRef("NOPE"));
    expect(warnings.join("")).toContain("--header-file");
  });

  it.runIf(unix)(
    "refuses a file that group or others can read or write, naming the fix, never a value",
    () => {
      for (const mode of [0o640, 0o604, 0o620, 0o644]) {
        const path = headerFile("Authorization: Bearer do-not-show-me\n", mode);
        const error = usageErrorOf(() => parseBridgeArgs(argv("--header-file", path, URL_ARG), {}, quiet));
        expect(error.message).toContain(path);
        expect(error.message).toMatch(/other users can read|group/);
        expect(error.message).toContain(`chmod 600 ${path}`);
        expect(error.message).not.toContain("do-not-show-me");
      }
    },
  );

  it.runIf(unix && isRoot)("refuses a file that belongs to someone else", () => {
    const path = headerFile("X-A: 1\n");
    chownSync(path, 4242, 4242);
    const error = usageErrorOf(() => parseBridgeArgs(argv("--header-file", path, URL_ARG), {}, quiet));
    expect(error.message).toMatch(/belongs to uid 4242, not to you/);
  });

  it("refuses what is not a regular file", () => {
    const dir = scratchDir("cmb-header-file-");
    expect(
      usageErrorOf(() => parseBridgeArgs(argv("--header-file", dir, URL_ARG), {}, quiet)).message,
    ).toMatch(/not a regular file/);
  });

  it("a missing file, a bad line or a transport header: an error naming the line, never its value", () => {
    expect(
      usageErrorOf(() => parseBridgeArgs(argv("--header-file", "/nonexistent/headers", URL_ARG), {}, quiet))
        .message,
    ).toMatch(/--header-file: cannot read "\/nonexistent\/headers": ENOENT/);
    const noColon = headerFile("X-A: 1\nBearer do-not-show-me\n");
    const error = usageErrorOf(() => parseBridgeArgs(argv("--header-file", noColon, URL_ARG), {}, quiet));
    expect(error.message).toMatch(/line 2/);
    expect(error.message).not.toContain("do-not-show-me");
    const badName = headerFile("Bearer do-not-show-me: x\n");
    const nameError = usageErrorOf(() => parseBridgeArgs(argv("--header-file", badName, URL_ARG), {}, quiet));
    expect(nameError.message).toMatch(/line 1.*not a valid HTTP header name/);
    expect(nameError.message).not.toContain("do-not-show-me");
    const reserved = headerFile("Mcp-Session-Id: x\n");
    expect(
      usageErrorOf(() => parseBridgeArgs(argv("--header-file", reserved, URL_ARG), {}, quiet)).message,
    ).toMatch(/line 1.*Mcp-Session-Id.*set by the bridge/);
  });

  it("refuses a file larger than 64 KiB", () => {
    const path = headerFile(`X-A: ${"a".repeat(70_000)}\n`);
    expect(
      usageErrorOf(() => parseBridgeArgs(argv("--header-file", path, URL_ARG), {}, quiet)).message,
    ).toMatch(/larger than 65536 bytes/);
  });
});

/** The commander failure `run` throws (a bad option value), or a usage error. */
function refusalOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("not refused");
}

describe("--authorize-param <key=value>", () => {
  it("is repeatable, for the relay, login and doctor; a later value of a key wins; `=` may be in the value", () => {
    for (const kind of ["relay", "login", "doctor"] as const) {
      const words = kind === "relay" ? [] : [kind];
      const command = parseBridgeArgs(
        argv(
          ...words,
          "--authorize-param",
          "audience=https://api.example.com",
          "--authorize-param",
          "prompt=consent",
          "--authorize-param",
          "prompt=login",
          "--authorize-param",
          "login_hint=a=b",
          URL_ARG,
        ),
        {},
        quiet,
      );
      expect(command.options.authorizeParams).toEqual({
        audience: "https://api.example.com",
        prompt: "login",
        login_hint: "a=b",
      });
    }
    expect(parseBridgeArgs(argv(URL_ARG), {}, quiet).options.authorizeParams).toBeUndefined();
  });

  it("refuses the protocol's own parameters and a value without a key, naming the flag", () => {
    for (const key of [
      "state",
      "code_challenge",
      "code_challenge_method",
      "redirect_uri",
      "client_id",
      "response_type",
      "resource",
      "scope",
      "SCOPE",
    ]) {
      const errors: string[] = [];
      const error = refusalOf(() =>
        parseBridgeArgs(argv("--authorize-param", `${key}=x`, URL_ARG), {}, (text) => errors.push(text)),
      );
      expect(`${error.message}${errors.join("")}`).toMatch(/--authorize-param.*cannot be overridden/s);
    }
    for (const bad of ["audience", "=x", "a b=c"]) {
      const errors: string[] = [];
      const error = refusalOf(() =>
        parseBridgeArgs(argv("--authorize-param", bad, URL_ARG), {}, (text) => errors.push(text)),
      );
      expect(`${error.message}${errors.join("")}`).toMatch(
        /--authorize-param.*key=value|not a parameter name/s,
      );
    }
  });
});

describe("--disable-resource-parameter", () => {
  it("is off by default, on for the relay, login, logout and doctor", () => {
    expect(parseBridgeArgs(argv(URL_ARG), {}, quiet).options.disableResourceParameter).toBe(false);
    for (const words of [[], ["login"], ["logout"], ["doctor"]]) {
      const command = parseBridgeArgs(argv(...words, "--disable-resource-parameter", URL_ARG), {}, quiet);
      expect(command.options.disableResourceParameter).toBe(true);
    }
  });
});

describe("--static-oauth-client-metadata <json|@file>", () => {
  it("takes JSON inline or from @file", () => {
    const inline = parseBridgeArgs(
      argv("--static-oauth-client-metadata", '{"client_name":"Acme","scope":"openid mcp"}', URL_ARG),
      {},
      quiet,
    );
    expect(inline.options.clientMetadata).toEqual({ client_name: "Acme", scope: "openid mcp" });
    const path = join(scratchDir("cmb-client-metadata-"), "client.json");
    writeFileSync(path, '{"logo_uri":"https://acme.example/logo.png"}\n');
    const fromFile = parseBridgeArgs(
      argv("login", "--static-oauth-client-metadata", `@${path}`, URL_ARG),
      {},
      quiet,
    );
    expect(fromFile.options.clientMetadata).toEqual({ logo_uri: "https://acme.example/logo.png" });
    expect(parseBridgeArgs(argv(URL_ARG), {}, quiet).options.clientMetadata).toBeUndefined();
  });

  it("refuses what is not a JSON object, a missing file, and a change to a field the sign-in depends on", () => {
    const refused = (value: string) =>
      usageErrorOf(() => parseBridgeArgs(argv("--static-oauth-client-metadata", value, URL_ARG), {}, quiet))
        .message;
    expect(refused("{client_name:")).toMatch(/--static-oauth-client-metadata: not valid JSON/);
    expect(refused('["a"]')).toMatch(/--static-oauth-client-metadata: .*a JSON object/);
    expect(refused("@/nonexistent/client.json")).toMatch(/cannot read "\/nonexistent\/client.json": ENOENT/);
    expect(refused('{"redirect_uris":["https://evil.example/cb"]}')).toMatch(
      /--static-oauth-client-metadata: "redirect_uris" is set by the bridge/,
    );
    expect(refused('{"grant_types":["client_credentials"]}')).toMatch(/"grant_types" is set by the bridge/);
    expect(refused('{"response_types":["token"]}')).toMatch(/"response_types" is set by the bridge/);
    expect(refused('{"token_endpoint_auth_method":"client_secret_post"}')).toMatch(
      /"token_endpoint_auth_method" is set by the bridge/,
    );
  });
});
