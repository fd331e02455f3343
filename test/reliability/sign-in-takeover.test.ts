/**
 * Another local user reads the sign-in URL from the browser's argv and tries to finish the victim's sign-in with
 * their own browser; the browser itself never inherits the package's secrets.
 */
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isOtherUsersSocket, runsUnderWsl, socketOwnerUid } from "../../src/auth/socket-owner.js";
import { startTinyOAuthServer } from "../auth/fixtures/tiny-oauth-server.js";
import { scratchDir } from "../support/scratch-dir.js";
import { answeredTwice, PROTOCOL_VERSION, spawnBridgeDriver } from "./fixtures/bridge-driver.js";

const ATTACKER_SOURCE = resolve(import.meta.dirname, "fixtures/argv-attacker.mjs");
const RECORDING_BROWSER = resolve(import.meta.dirname, "fixtures/recording-browser.mjs");
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

const root = scratchDir("cmb-takeover-");
// The attacker (another user when the suite runs as root) writes its findings here.
chmodSync(root, 0o777);
// The clone may sit in a folder only its owner can enter (CI clones into `mktemp -d`): the attacker runs a copy.
const ATTACKER = join(root, "argv-attacker.mjs");
copyFileSync(ATTACKER_SOURCE, ATTACKER);
chmodSync(ATTACKER, 0o644);
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
});

async function waitForFile(path: string, timeoutMs = 20_000): Promise<string> {
  for (let waited = 0; waited < timeoutMs; waited += 50) {
    if (existsSync(path)) {
      const text = readFileSync(path, "utf8");
      if (text) return text;
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`${path} never appeared`);
}

/** True when a user other than the owner can run `path` (every folder on the way and the file executable by others). */
function runnableByOthers(path: string): boolean {
  try {
    for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return false;
    }
    return (statSync(path).mode & 0o001) !== 0;
  } catch {
    return false;
  }
}

// The Node that runs this suite may live under root's home (node@24 in the user cache), which another user cannot
// enter; the attacker then runs on the machine's own Node.
const attackerNode =
  [process.execPath, "/usr/bin/node", "/usr/local/bin/node"].find(runnableByOthers) ?? process.execPath;

function runAttacker(resultFile: string, port: number, asOtherUser: boolean): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(asOtherUser ? attackerNode : process.execPath, [ATTACKER, resultFile, String(port)], {
      env: { PATH: process.env.PATH ?? "", HOME: root },
      stdio: ["ignore", "ignore", "pipe"],
      ...(asOtherUser ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("error", fail);
    child.once("close", (code) =>
      code === 0 ? done() : fail(new Error(`attacker exited ${code}: ${stderr}`)),
    );
  });
}

describe("A sign-in waiting for the browser, seen by another local user", () => {
  it("the browser's argv holds only a one-time loopback page; another user cannot use it; the victim signs in", async () => {
    const tiny = await startTinyOAuthServer({
      preRegistered: { clientId: "pre-1", clientSecret: "client-secret-of-the-victim" },
    });
    closers.push(() => tiny.close());
    const recordFile = join(root, "browser.json");
    const goFile = join(root, "go");
    const bridge = spawnBridgeDriver(
      [
        "--token-store",
        "file",
        "--auth-timeout",
        "30",
        "--client-id",
        "pre-1",
        "--header",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the bridge expands ${NAME} itself.
        "X-Team: ${TEAM_TOKEN}",
        tiny.resourceUrl,
      ],
      {
        CHAT_CONFIG_DIR: join(root, "config"),
        CHAT_MCP_CLIENT_SECRET: "client-secret-of-the-victim",
        CHAT_API_KEY: "api-key-of-the-victim",
        TEAM_TOKEN: "team-token-of-the-victim",
        BROWSER: `${process.execPath} ${RECORDING_BROWSER}`,
        RECORDING_BROWSER_FILE: recordFile,
        RECORDING_BROWSER_GO: goFile,
      },
    );
    closers.push(async () => void (await bridge.stop(3_000)));
    const id = bridge.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "victim", version: "1" },
    });
    const browser = JSON.parse(await waitForFile(recordFile)) as {
      argv: string[];
      env: Record<string, string>;
    };

    // What anyone can read: the browser's argv and the bridge's stderr. Neither holds `state`.
    const startUrl = browser.argv.at(-1) ?? "";
    const port = Number(startUrl.match(/^http:\/\/127\.0\.0\.1:(\d+)\/start\/[A-Za-z0-9_-]{43}$/)?.[1]);
    expect(port, startUrl).toBeGreaterThan(0);
    expect(bridge.stderr()).not.toMatch(/state=|\/authorize/);

    // The browser does not inherit the package's secrets.
    expect(browser.env.CHAT_MCP_CLIENT_SECRET).toBeUndefined();
    expect(browser.env.CHAT_API_KEY).toBeUndefined();
    expect(browser.env.TEAM_TOKEN).toBeUndefined();
    expect(browser.env.PATH).toBe(process.env.PATH);

    const resultFile = join(root, "attacker.json");
    // The bridge may check /authorize itself before the browser opens (a client the server forgot): count from here.
    const authorizationsBefore = tiny.authorizations.length;
    if (!isRoot) {
      // Without a second user to play the attacker, the same user's late visit shows the link is spent.
      writeFileSync(goFile, "");
      await bridge.waitAnswered([id], 30_000);
    }
    await runAttacker(resultFile, port, isRoot);
    const attack = JSON.parse(readFileSync(resultFile, "utf8")) as {
      uid: number;
      found: string[];
      hops: Array<{ url: string; status?: number; error?: string }>;
    };
    expect(attack.found).toEqual([startUrl]);
    if (isRoot) {
      expect(attack.uid).toBe(NOBODY);
      // Another user's connection is closed before anything is answered: no cookie, no redirect, no state.
      expect(attack.hops).toHaveLength(1);
      expect(attack.hops[0]?.error).toBeDefined();
      expect(tiny.authorizations).toHaveLength(authorizationsBefore);
      writeFileSync(goFile, "");
      await bridge.waitAnswered([id], 30_000);
      // The sign-in runs in its own process, apart from the answer to initialize: wait for the victim's browser.
      for (
        let waited = 0;
        waited < 30_000 && tiny.authorizations.length === authorizationsBefore;
        waited += 100
      )
        await new Promise((done) => setTimeout(done, 100));
    } else {
      expect(attack.hops.map((hop) => hop.status)).toEqual([404]);
    }

    // The victim's own browser finished the sign-in: one authorization, and the bridge is signed in.
    expect(bridge.answersTo(id)[0]?.error).toBeUndefined();
    expect(tiny.authorizations).toHaveLength(authorizationsBefore + 1);
    expect(answeredTwice(bridge)).toEqual([]);
  }, 60_000);
});

describe("The socket-owner lock reads the kernel's socket tables (Linux)", () => {
  /** A connection from `from` to a server on `listen`, as the server accepted it. */
  async function acceptedConnection(listen: string, from: string) {
    const server = createServer();
    const acceptedSocket = new Promise<Socket>((done) => server.once("connection", done));
    await new Promise<void>((done) => server.listen(0, listen, done));
    const serverPort = (server.address() as { port: number }).port;
    const client = connect(serverPort, from);
    await new Promise<void>((done, fail) => {
      client.once("connect", () => done());
      client.once("error", fail);
    });
    const accepted = await acceptedSocket;
    return {
      accepted,
      close: () => {
        client.destroy();
        server.close();
      },
    };
  }

  const cases: Array<[string, string, string]> = [
    ["IPv4", "127.0.0.1", "127.0.0.1"],
    ["IPv4 from a dual-stack (IPv4-mapped IPv6) socket", "127.0.0.1", "::ffff:127.0.0.1"],
    ...(existsSync("/proc/net/if_inet6") && /^0{31}1 /m.test(readFileSync("/proc/net/if_inet6", "utf8"))
      ? [["IPv6", "::1", "::1"] as [string, string, string]]
      : []),
  ];
  for (const [name, listen, from] of cases) {
    it(`finds this process's uid as the owner of a loopback connection it made (${name})`, async () => {
      const { accepted, close } = await acceptedConnection(listen, from);
      try {
        if (existsSync("/proc/net/tcp")) {
          expect(socketOwnerUid(accepted)).toBe(process.getuid?.());
          expect(isOtherUsersSocket(accepted)).toBe(false);
        } else {
          expect(socketOwnerUid(accepted)).toBeUndefined();
        }
      } finally {
        close();
      }
    });
  }

  it("refuses a connection no row of the tables shows (Linux)", async () => {
    const { accepted, close } = await acceptedConnection("127.0.0.1", "127.0.0.1");
    try {
      const unknown = {
        ...accepted,
        localAddress: accepted.localAddress,
        localPort: accepted.localPort,
        remoteAddress: "127.0.0.9",
        remotePort: accepted.remotePort,
      };
      expect(isOtherUsersSocket(unknown)).toBe(existsSync("/proc/net/tcp") && !runsUnderWsl());
    } finally {
      close();
    }
  });
});
