/** The bridge's command line, headers option and stdin framing, tested without spawning. */
import { describe, expect, it } from "vitest";
import { parseBridgeArgs, UsageError } from "../../src/bridge/command/arguments.js";
import { parseHeaderOption } from "../../src/bridge/options/custom-headers.js";
import { parseClientLine } from "../../src/bridge/stdio/client-line.js";
import { LineSplitter } from "../../src/bridge/stdio/line-splitter.js";

const argv = (...args: string[]) => ["node", "chat-mcp-bridge", ...args];
const quiet = () => {};
/** `${NAME}`, the reference `--header` expands (written so it reads as the literal users type). */
const envRef = (name: string) => `\${${name}}`;

describe("chat-mcp-bridge [options] [mcp-url]", () => {
  it("takes the URL as the last argument, after the options", () => {
    const command = parseBridgeArgs(
      argv(
        "--header",
        `X-Team: ${envRef("TEAM")}`,
        "--callback-port",
        "23456",
        "--no-browser",
        "--auth-timeout",
        "90",
        "--token-store",
        "file",
        "--debug",
        "--client-id",
        "abc",
        "https://chat.example.com/mcp",
      ),
      { TEAM: "acme", CHAT_MCP_CLIENT_SECRET: "shh" },
      quiet,
    );
    expect(command.kind).toBe("relay");
    expect(command.options).toMatchObject({
      url: new URL("https://chat.example.com/mcp"),
      headers: [{ name: "X-Team", value: "acme" }],
      callbackPort: 23456,
      openBrowser: false,
      authTimeoutMs: 90_000,
      tokenStore: "file",
      debug: true,
      clientId: "abc",
      clientSecret: "shh",
    });
  });

  it("defaults to $CHAT_MCP_URL, else <$CHAT_API_URL>/mcp", () => {
    expect(parseBridgeArgs(argv(), { CHAT_MCP_URL: "https://a.example/mcp" }, quiet).options.url?.href).toBe(
      "https://a.example/mcp",
    );
    expect(parseBridgeArgs(argv(), {}, quiet).options.url?.href).toBe("http://127.0.0.1:8787/mcp");
  });

  it("has login and logout subcommands with the same options", () => {
    const login = parseBridgeArgs(argv("login", "--no-browser", "https://chat.example.com/mcp"), {}, quiet);
    expect(login).toMatchObject({ kind: "login", options: { openBrowser: false } });
    expect(parseBridgeArgs(argv("logout", "https://chat.example.com/mcp"), {}, quiet).kind).toBe("logout");
  });

  it("takes --device-code for the relay and for login, before or after the subcommand, and off by default", () => {
    const url = "https://chat.example.com/mcp";
    expect(parseBridgeArgs(argv("--device-code", url), {}, quiet).options).toMatchObject({
      deviceCode: true,
    });
    expect(parseBridgeArgs(argv("login", "--device-code", url), {}, quiet)).toMatchObject({
      kind: "login",
      options: { deviceCode: true },
    });
    // A flag without a value: the word after it is the subcommand, not its value.
    expect(parseBridgeArgs(argv("--device-code", "login", url), {}, quiet)).toMatchObject({
      kind: "login",
      options: { deviceCode: true },
    });
    expect(parseBridgeArgs(argv(url), {}, quiet).options).toMatchObject({ deviceCode: false });
  });

  it("refuses plain http to a non-loopback host unless --allow-http", () => {
    expect(() => parseBridgeArgs(argv("http://chat.example.com/mcp"), {}, quiet)).toThrow(UsageError);
    expect(
      parseBridgeArgs(argv("--allow-http", "http://chat.example.com/mcp"), {}, quiet).options.allowHttp,
    ).toBe(true);
    expect(parseBridgeArgs(argv("http://localhost:9/mcp"), {}, quiet).options.url?.port).toBe("9");
  });

  it("rejects bad values as usage errors", () => {
    expect(() =>
      parseBridgeArgs(argv("--token-store", "disk", "https://a.example/mcp"), {}, quiet),
    ).toThrow();
    expect(() =>
      parseBridgeArgs(argv("--callback-port", "99999", "https://a.example/mcp"), {}, quiet),
    ).toThrow();
    expect(() =>
      parseBridgeArgs(
        argv("--client-metadata-url", "http://a.example/c.json", "https://a.example/mcp"),
        {},
        quiet,
      ),
    ).toThrow(UsageError);
    expect(() => parseBridgeArgs(argv("ftp://a.example/mcp"), {}, quiet)).toThrow(UsageError);
    expect(() => parseBridgeArgs(argv("--client-secret", "x", "https://a.example/mcp"), {}, quiet)).toThrow();
  });
});

describe("only the command argv names is built", () => {
  /** Runs parseBridgeArgs on `args` and returns what commander printed on stdout (help goes there). */
  function helpOf(...args: string[]): string {
    let printed = "";
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array) => {
      printed += String(chunk);
      return true;
    }) as typeof process.stdout.write;
    try {
      parseBridgeArgs(argv(...args), {}, quiet);
    } catch {
      // commander ends help with its own error (exit code 0)
    } finally {
      process.stdout.write = write;
    }
    return printed;
  }

  it("help still lists every subcommand, and a subcommand's help its own options", () => {
    const help = helpOf("--help");
    for (const name of ["login", "logout", "doctor"]) expect(help).toMatch(new RegExp(`\\n\\s+${name} `));
    expect(helpOf("doctor", "--help")).toContain("--sign-in");
    expect(helpOf("https://chat.example.com/mcp", "-h")).toContain("login");
  });

  it("program options before a subcommand still reach it, and the relay takes a URL that is not a subcommand", () => {
    const login = parseBridgeArgs(
      argv("--debug", "login", "--token-store", "file", "https://a.example/mcp"),
      {},
      quiet,
    );
    expect(login).toMatchObject({ kind: "login", options: { debug: true, tokenStore: "file" } });
    const doctor = parseBridgeArgs(
      argv("--header", "X-A: 1", "doctor", "--json", "https://a.example/mcp"),
      {},
      quiet,
    );
    expect(doctor).toMatchObject({
      kind: "doctor",
      options: { json: true, headers: [{ name: "X-A", value: "1" }] },
    });
    const relay = parseBridgeArgs(argv("--log-file", "login", "https://a.example/mcp"), {}, quiet);
    expect(relay).toMatchObject({ kind: "relay", options: { logFile: "login" } });
    expect(() => parseBridgeArgs(argv("--json", "https://a.example/mcp"), {}, quiet)).toThrow(
      /unknown option/,
    );
  });
});

describe("the flags from mcp-remote, --profile and doctor", () => {
  it("reads --ignore-tool (repeatable), --read-only, --log-file, --silent, --host, --resource and --profile", () => {
    const command = parseBridgeArgs(
      argv(
        "--ignore-tool",
        "resolve_*",
        "--ignore-tool",
        "send_message",
        "--read-only",
        "--log-file",
        "/tmp/bridge.log",
        "--silent",
        "--host",
        "localhost",
        "--resource",
        "https://api.example.com/",
        "--profile",
        "acme",
        "https://chat.example.com/mcp",
      ),
      {},
      quiet,
    );
    expect(command.options).toMatchObject({
      ignoreTools: ["resolve_*", "send_message"],
      readOnly: true,
      logFile: "/tmp/bridge.log",
      silent: true,
      callbackHost: "localhost",
      resource: "https://api.example.com/",
      profile: "acme",
    });
    expect(parseBridgeArgs(argv("https://chat.example.com/mcp"), {}, quiet).options).toMatchObject({
      ignoreTools: [],
      readOnly: false,
      silent: false,
      profile: undefined,
    });
  });

  it("refuses a non-loopback --host, a --resource that is not an http(s) URL and an odd --profile name", () => {
    for (const args of [
      ["--host", "example.com"],
      ["--resource", "not a url"],
      ["--resource", "https://a.example/#frag"],
      ["--profile", "../acme"],
      ["--profile", ""],
    ]) {
      expect(() => parseBridgeArgs(argv(...args, "https://chat.example.com/mcp"), {}, quiet)).toThrow();
    }
  });

  it("doctor keeps the URL raw (a bad one is its first failed check) and takes --json, --sign-in and --profile", () => {
    const command = parseBridgeArgs(
      argv("doctor", "--json", "--sign-in", "--profile", "acme", "http://chat.example.com/mcp"),
      {},
      quiet,
    );
    expect(command).toMatchObject({
      kind: "doctor",
      target: { raw: "http://chat.example.com/mcp", problem: expect.stringMatching(/refusing plain http/) },
      options: { json: true, signIn: true, profile: "acme" },
    });
    expect(parseBridgeArgs(argv("doctor"), { CHAT_MCP_URL: "https://a.example/mcp" }, quiet)).toMatchObject({
      kind: "doctor",
      target: { raw: "https://a.example/mcp", url: new URL("https://a.example/mcp") },
      options: { json: false, signIn: false },
    });
  });
});

describe("--header", () => {
  it(`expands ${envRef("ENV")} and reports unset variables by name only`, () => {
    const missing: string[] = [];
    expect(parseHeaderOption(`Authorization: Bearer ${envRef("TOKEN")}`, { TOKEN: "t0k" })).toEqual({
      name: "Authorization",
      value: "Bearer t0k",
    });
    expect(parseHeaderOption(`X-A: ${envRef("NOPE")}-x`, {}, (name) => missing.push(name))).toEqual({
      name: "X-A",
      value: "-x",
    });
    expect(missing).toEqual(["NOPE"]);
  });

  it("rejects malformed and transport-owned headers", () => {
    expect(() => parseHeaderOption("no colon")).toThrow(UsageError);
    expect(() => parseHeaderOption("Bad Name: x")).toThrow(UsageError);
    expect(() => parseHeaderOption("Mcp-Session-Id: x")).toThrow(UsageError);
    expect(() => parseHeaderOption(`X-A: ${envRef("V")}`, { V: "a\r\nInjected: yes" })).toThrow(UsageError);
  });
});

describe("stdin framing", () => {
  const collect = (maxBytes?: number) => {
    const lines: string[] = [];
    const oversized: number[] = [];
    const splitter = new LineSplitter(
      { onLine: (line) => lines.push(line), onOversizedLine: (bytes) => oversized.push(bytes) },
      maxBytes,
    );
    return { splitter, lines, oversized };
  };

  it("joins partial lines, splits several per chunk, and skips blank lines and CRs", () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from('{"a":'));
    splitter.push(Buffer.from('1}\n{"b":2}\r\n\n{"c"'));
    splitter.push(Buffer.from(":3}"));
    splitter.end();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("keeps multi-byte characters split across chunks intact", () => {
    const { splitter, lines } = collect();
    const bytes = Buffer.from('{"t":"é☃"}\n');
    splitter.push(bytes.subarray(0, 8));
    splitter.push(bytes.subarray(8));
    expect(lines).toEqual(['{"t":"é☃"}']);
  });

  it("drops an over-long line as it arrives and goes on with the next", () => {
    const { splitter, lines, oversized } = collect(16);
    splitter.push(Buffer.from("x".repeat(10)));
    splitter.push(Buffer.from("x".repeat(10)));
    splitter.push(Buffer.from(`${"x".repeat(10)}\n{"ok":true}\n`));
    expect(oversized).toEqual([30]);
    expect(lines).toEqual(['{"ok":true}']);
  });
});

describe("client lines", () => {
  it("accepts JSON-RPC messages and keeps fields the schema does not know", () => {
    const parsed = parseClientLine('{"jsonrpc":"2.0","id":1,"method":"x","params":{"extra":{"deep":true}}}');
    expect(parsed).toEqual({
      message: { jsonrpc: "2.0", id: 1, method: "x", params: { extra: { deep: true } } },
    });
  });

  it("answers invalid JSON with -32700 and id null, and non-JSON-RPC with -32600", () => {
    expect(parseClientLine("{nope")).toMatchObject({ error: { id: null, error: { code: -32700 } } });
    expect(parseClientLine('{"id":4}')).toMatchObject({ error: { id: 4, error: { code: -32600 } } });
    expect(parseClientLine("[1,2]")).toMatchObject({ error: { id: null, error: { code: -32600 } } });
  });
});

describe("--client-credentials", () => {
  const url = "https://chat.example.com/mcp";
  const withSecret = { CHAT_MCP_CLIENT_SECRET: "a-client-secret" };

  it("takes --client-id with the secret from the environment, or with --client-private-key", () => {
    const bySecret = parseBridgeArgs(
      argv("--client-credentials", "--client-id", "ci", url),
      withSecret,
      quiet,
    );
    expect(bySecret.kind === "relay" && bySecret.options).toMatchObject({
      clientCredentials: true,
      clientId: "ci",
      clientSecret: "a-client-secret",
    });
    const byKey = parseBridgeArgs(
      argv("login", "--client-credentials", "--client-id", "ci", "--client-private-key", "/k.pem", url),
      {},
      quiet,
    );
    expect(byKey.kind === "login" && byKey.options).toMatchObject({
      clientCredentials: true,
      clientPrivateKeyFile: "/k.pem",
    });
  });

  it.each([
    [["--client-credentials", url], withSecret, "needs --client-id"],
    [
      ["--client-credentials", "--client-id", "ci", url],
      {},
      "$CHAT_MCP_CLIENT_SECRET or --client-private-key",
    ],
    [["--client-id", "ci", "--client-private-key", "/k.pem", url], {}, "goes with --client-credentials"],
    [
      ["--client-credentials", "--client-id", "ci", "--client-metadata-url", "https://a.example/c.json", url],
      withSecret,
      "choose one",
    ],
  ])("refuses %j", (args, env, message) => {
    expect(() => parseBridgeArgs(argv(...args), env, quiet)).toThrow(UsageError);
    expect(() => parseBridgeArgs(argv(...args), env, quiet)).toThrow(message);
  });
});
