/** mcp-remote's network and callback flags on the bridge's command line, parsed without spawning: time-outs, keep-alive, cookies, --use-id-token, --callback-path, --auth-success-url. */
import { describe, expect, it } from "vitest";
import { parseBridgeArgs } from "../../src/bridge/command/arguments.js";
import { bridgeLoginCommand } from "../../src/bridge/sign-in/oauth.js";

const argv = (...args: string[]) => ["node", "chat-mcp-bridge", ...args];
const quiet = () => {};
const URL_ARG = "https://chat.example.com/mcp";
const parse = (...args: string[]) => parseBridgeArgs(argv(...args), {}, quiet);
const refusal = (...args: string[]) => {
  try {
    parse(...args);
  } catch (error) {
    return String((error as Error).message);
  }
  return "accepted";
};

describe("defaults", () => {
  it("connects within 10 s, waits on headers and bodies without a limit, cookies on, no ping", () => {
    const { options } = parse(URL_ARG);
    expect(options).toMatchObject({ connectTimeoutMs: 10_000, disableCookies: false });
    expect(options.headersTimeoutMs).toBeUndefined();
    expect(options.bodyTimeoutMs).toBeUndefined();
    expect(options.pingIntervalMs).toBeUndefined();
    expect(options.useIdToken).toBeUndefined();
  });
});

describe("--connect-timeout, --headers-timeout, --body-timeout <s>", () => {
  it("are seconds (fractions too); 0 turns the headers and body time-outs off", () => {
    const { options } = parse(
      ...["--connect-timeout", "2.5", "--headers-timeout", "30", "--body-timeout", "0", URL_ARG],
    );
    expect(options).toMatchObject({ connectTimeoutMs: 2500, headersTimeoutMs: 30_000, bodyTimeoutMs: 0 });
  });

  it("refuses a negative or non-number value, and 0 for the connection", () => {
    expect(refusal("--connect-timeout", "0", URL_ARG)).toMatch(/--connect-timeout.*positive/);
    expect(refusal("--headers-timeout", "-1", URL_ARG)).toMatch(/--headers-timeout.*0 for none/);
    expect(refusal("--body-timeout", "soon", URL_ARG)).toMatch(/--body-timeout/);
  });
});

describe("--keep-alive, --ping-interval <s>", () => {
  it("--keep-alive pings every 30 s; --ping-interval sets the interval and implies it", () => {
    expect(parse("--keep-alive", URL_ARG).options.pingIntervalMs).toBe(30_000);
    expect(parse("--ping-interval", "5", URL_ARG).options.pingIntervalMs).toBe(5000);
    expect(parse("--keep-alive", "--ping-interval", "12", URL_ARG).options.pingIntervalMs).toBe(12_000);
    expect(refusal("--ping-interval", "0", URL_ARG)).toMatch(/--ping-interval/);
  });
});

describe("seconds flags that become timers are bounded", () => {
  // Node's timers overflow past 2^31-1 ms (24.8 days) and fire at once: a day is the most any of them takes.
  it("every seconds flag refuses more than a day, naming the flag and its range", () => {
    for (const flag of [
      "--auth-timeout",
      "--connect-timeout",
      "--headers-timeout",
      "--body-timeout",
      "--ping-interval",
    ]) {
      expect(refusal(flag, "86401", URL_ARG)).toMatch(new RegExp(`${flag}.*86400`));
      expect(refusal(flag, "2147484", URL_ARG)).toMatch(new RegExp(`${flag}.*86400`));
      expect(refusal(flag, "1e300", URL_ARG)).toMatch(new RegExp(`${flag}.*86400`));
      expect(refusal(flag, "86400", URL_ARG)).toBe("accepted");
    }
  });
});

describe("--disable-cookies, --use-id-token", () => {
  it("are switches", () => {
    const { options } = parse("--disable-cookies", "--use-id-token", URL_ARG);
    expect(options).toMatchObject({ disableCookies: true, useIdToken: true });
  });
});

describe("--callback-path <path>, --auth-success-url <url>", () => {
  it("are taken by the relay, login and doctor", () => {
    for (const words of [[], ["login"], ["doctor"]]) {
      const { options } = parse(
        ...words,
        ...["--callback-path", "/oauth/callback", "--auth-success-url", "https://example.com/ok", URL_ARG],
      );
      expect(options).toMatchObject({
        callbackPath: "/oauth/callback",
        authSuccessUrl: "https://example.com/ok",
      });
    }
  });

  it("refuses a relative callback path and a success page that is not http(s), or plain http afar", () => {
    expect(refusal("--callback-path", "oauth", URL_ARG)).toMatch(/--callback-path.*start with/);
    expect(refusal("--auth-success-url", "javascript:alert(1)", URL_ARG)).toMatch(/--auth-success-url/);
    expect(refusal("--auth-success-url", "http://example.com/ok", URL_ARG)).toMatch(/https/);
    expect(refusal("--allow-http", "--auth-success-url", "http://example.com/ok", URL_ARG)).toBe("accepted");
  });
});

describe("the login command the relay suggests", () => {
  it("carries --use-id-token and --callback-path: the stored token and the registration depend on them", () => {
    const command = parse("--use-id-token", "--callback-path", "/oauth/callback", "--keep-alive", URL_ARG);
    if (command.kind !== "relay") throw new Error("not the relay");
    expect(bridgeLoginCommand(command.options, {}, ["node", "chat-mcp-bridge"])).toBe(
      `chat-mcp-bridge login --use-id-token --callback-path /oauth/callback ${URL_ARG}`,
    );
  });
});
