/**
 * Another local user against a sign-in waiting for its browser: sharing the callback port from another 127.x
 * address, calling back over ::1, holding [::1]:<port> first, or opening the start page and hanging up at once.
 * None of them finishes, receives or stops the sign-in; the victim's own browser still signs in.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalServerUrl, derivedCallbackPort } from "../../src/auth/index.js";
import { type LoopbackCallback, startLoopbackCallback } from "../../src/auth/loopback-callback.js";
import { startTinyOAuthServer, type TinyOAuthServer } from "../auth/fixtures/tiny-oauth-server.js";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";
import { type BridgeDriver, PROTOCOL_VERSION, spawnBridgeDriver } from "./fixtures/bridge-driver.js";

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const hasIpv6Loopback =
  existsSync("/proc/net/if_inet6") && /^0{31}1 /m.test(readFileSync("/proc/net/if_inet6", "utf8"));
const otherUser = needs(
  "another uid",
  !existsSync("/proc/net/tcp")
    ? "the kernel's socket tables (/proc/net/tcp) are Linux only"
    : isRoot
      ? undefined
      : "running the attacker as another user needs root (the suite runs as an ordinary user)",
);
const root = scratchDir("cmb-local-attacker-");
chmodSync(root, 0o777);
const ATTACKER = join(root, "callback-attacker.mjs");
copyFileSync(resolve(import.meta.dirname, "fixtures/callback-attacker.mjs"), ATTACKER);
chmodSync(ATTACKER, 0o644);
const RECORDING_BROWSER = resolve(import.meta.dirname, "fixtures/recording-browser.mjs");
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
});

/** True when another user can run `path` (every folder on the way and the file executable by others). */
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
const attackerNode =
  [process.execPath, "/usr/bin/node", "/usr/local/bin/node"].find(runnableByOthers) ?? process.execPath;

interface AttackResult {
  uid: number;
  found: string[];
  hops: Array<{ url: string; status?: number; error?: string }>;
  received: string[];
  listening?: boolean;
}

/** Runs the attacker as `nobody`; resolves when it exits (or at once for `squat`, which runs until told to stop). */
function runAttacker(mode: string, args: string[]): { done: Promise<void>; result: () => AttackResult } {
  const resultFile = join(root, `${mode}-${Date.now()}.json`);
  const child = spawn(attackerNode, [ATTACKER, mode, resultFile, ...args], {
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "ignore", "pipe"],
    uid: NOBODY,
    gid: NOBODY,
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<void>((ok, fail) => {
    child.once("error", fail);
    child.once("close", (code) =>
      code === 0 ? ok() : fail(new Error(`attacker exited ${code}: ${stderr}`)),
    );
  });
  closers.push(async () => void child.kill());
  return {
    done,
    result: () => (existsSync(resultFile) ? JSON.parse(readFileSync(resultFile, "utf8") || "{}") : {}),
  };
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  for (let waited = 0; waited < timeoutMs; waited += 50) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`${what} never happened`);
}

/** A bridge signing in to `tiny` through a slow recording browser that starts only when told to. */
function victimBridge(tiny: TinyOAuthServer, name: string, extraArgs: string[]) {
  const recordFile = join(root, `${name}-browser.json`);
  const goFile = join(root, `${name}-go`);
  const bridge = spawnBridgeDriver(
    ["--token-store", "file", "--auth-timeout", "40", ...extraArgs, tiny.resourceUrl],
    {
      CHAT_CONFIG_DIR: join(root, `${name}-config`),
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
  // Signed out, initialize is answered at once: the first call is what meets a sign-in that cannot start.
  const call = bridge.request("tools/call", { name: "list_chats", arguments: {} });
  const startUrl = () =>
    waitFor("the browser's start", () =>
      existsSync(recordFile) && readFileSync(recordFile, "utf8")
        ? ((JSON.parse(readFileSync(recordFile, "utf8")) as { argv: string[] }).argv.at(-1) ?? "")
        : undefined,
    );
  const letBrowserGo = () => writeFileSync(goFile, "");
  return { bridge, id, call, startUrl, letBrowserGo };
}

/** The call made while signed out was answered by the server: the sign-in completed within the call's wait. */
async function expectSignedIn(bridge: BridgeDriver, call: number): Promise<void> {
  await bridge.waitAnswered([call], 40_000);
  const answer = bridge.answersTo(call)[0];
  expect(answer?.error, bridge.stderr()).toBeUndefined();
  expect(answer?.result?.isError, JSON.stringify(answer)).not.toBe(true);
}

describe(
  "A local user sharing the callback port from another 127.x address (default flags)",
  otherUser,
  () => {
    it("never reaches the callback server; the victim signs in", async () => {
      const tiny = await startTinyOAuthServer({ preRegistered: { clientId: "pre-1", clientSecret: "s" } });
      closers.push(() => tiny.close());
      const victim = victimBridge(tiny, "shared", ["--client-id", "pre-1"]);
      const startUrl = await victim.startUrl();
      const port = Number(new URL(startUrl).port);
      const before = tiny.authorizations.length;
      const attacker = runAttacker("shared-port", [String(port)]);
      await attacker.done;
      const attack = attacker.result();
      expect(attack.uid).toBe(NOBODY);
      expect(attack.found).toEqual([startUrl]);
      // Every connection of the attacker to the callback port was closed unanswered: no cookie, no redirect.
      expect(attack.hops.length).toBeGreaterThan(1);
      expect(attack.hops.filter((hop) => hop.status !== undefined)).toEqual([]);
      expect(tiny.authorizations).toHaveLength(before);
      victim.letBrowserGo();
      await expectSignedIn(victim.bridge, victim.call);
      expect(tiny.authorizations).toHaveLength(before + 1);
    }, 90_000);
  },
);

describe.skipIf(!hasIpv6Loopback)("A local user calling back over ::1 (--host localhost)", otherUser, () => {
  it("is refused like an IPv4 one; the victim signs in", async () => {
    const tiny = await startTinyOAuthServer();
    closers.push(() => tiny.close());
    const victim = victimBridge(tiny, "ipv6", ["--host", "localhost"]);
    const startUrl = await victim.startUrl();
    expect(startUrl).toMatch(/^http:\/\/localhost:\d+\/start\//);
    const before = tiny.authorizations.length;
    const attacker = runAttacker("ipv6", [new URL(startUrl).port]);
    await attacker.done;
    const attack = attacker.result();
    expect(attack.found).toEqual([startUrl]);
    expect(attack.hops.length).toBeGreaterThan(0);
    expect(attack.hops.filter((hop) => hop.status !== undefined)).toEqual([]);
    expect(tiny.authorizations).toHaveLength(before);
    victim.letBrowserGo();
    await expectSignedIn(victim.bridge, victim.call);
  }, 90_000);
});

describe.skipIf(!hasIpv6Loopback)(
  "A local user holding [::1]:<callback port> first (--host localhost)",
  otherUser,
  () => {
    it("the derived port is given up for one the bridge holds on both families; the victim signs in", async () => {
      const tiny = await startTinyOAuthServer();
      closers.push(() => tiny.close());
      const squatted = derivedCallbackPort(canonicalServerUrl(tiny.resourceUrl));
      const stopFile = join(root, "squat-stop-derived");
      const squatter = runAttacker("squat", [String(squatted), stopFile]);
      await waitFor("the squatter", () => squatter.result().listening);
      const victim = victimBridge(tiny, "squat-derived", ["--host", "localhost"]);
      const port = Number(new URL(await victim.startUrl()).port);
      expect(port).not.toBe(squatted);
      victim.letBrowserGo();
      await expectSignedIn(victim.bridge, victim.call);
      writeFileSync(stopFile, "");
      await squatter.done;
      // Nothing of the sign-in reached the squatter's socket.
      expect(squatter.result().received).toEqual([]);
    }, 90_000);

    it("an explicit --callback-port held by the other user is an error naming the port and the holder", async () => {
      const tiny = await startTinyOAuthServer();
      closers.push(() => tiny.close());
      const squatted = 20_000 + (process.pid % 9_000);
      const stopFile = join(root, "squat-stop-explicit");
      const squatter = runAttacker("squat", [String(squatted), stopFile]);
      await waitFor("the squatter", () => squatter.result().listening);
      const victim = victimBridge(tiny, "squat-explicit", [
        "--host",
        "localhost",
        "--callback-port",
        String(squatted),
      ]);
      await victim.bridge.waitAnswered([victim.call], 30_000);
      const answer = victim.bridge.answersTo(victim.call)[0];
      const text = JSON.stringify(answer?.result?.content ?? answer?.error);
      expect(answer?.result?.isError, text).toBe(true);
      expect(text).toContain(`[::1]:${squatted} is in use`);
      expect(text).toContain(`uid ${NOBODY}`);
      // No browser was started for a sign-in that could not receive its answer.
      expect(existsSync(join(root, "squat-explicit-browser.json"))).toBe(false);
      writeFileSync(stopFile, "");
      await squatter.done;
      expect(squatter.result().received).toEqual([]);
    }, 90_000);
  },
);

describe(
  "A local user opening the start page and hanging up at once (a bridge running as root)",
  otherUser,
  () => {
    it("spends nothing: the orphaned socket (uid 0 in TIME_WAIT) is no peer; the victim's browser still starts", async () => {
      const callback: LoopbackCallback = await startLoopbackCallback();
      closers.push(() => callback.close());
      const pending = callback.begin("https://as.example/authorize?state=h1", "h1", 20_000);
      let outcome = "waiting";
      pending.answer.then(
        () => (outcome = "answered"),
        (error: Error) => (outcome = error.message),
      );
      const resultFile = join(root, "send-and-close.json");
      // Synchronous on purpose: this process accepts the connection only after the attacker has sent its request,
      // closed its socket and exited, as a busy bridge would.
      const attacker = spawnSync(
        attackerNode,
        [ATTACKER, "send-and-close", resultFile, String(callback.port), new URL(pending.startUrl).pathname],
        {
          env: { PATH: process.env.PATH ?? "" },
          uid: NOBODY,
          gid: NOBODY,
          encoding: "utf8",
          timeout: 20_000,
        },
      );
      expect(attacker.status, attacker.stderr).toBe(0);
      const attack = JSON.parse(readFileSync(resultFile, "utf8")) as AttackResult;
      expect(attack.uid).toBe(NOBODY);
      expect(attack.hops[0]?.error).toMatch(/uid 0\)$/);
      // A request the server answers after the attacker's: by then the attacker's connection has been handled.
      expect((await fetch(`http://127.0.0.1:${callback.port}/`)).status).toBe(404);
      const started = await fetch(pending.startUrl, { redirect: "manual" });
      expect(started.status).toBe(302);
      expect(started.headers.get("location")).toBe("https://as.example/authorize?state=h1");
      expect(outcome).toBe("waiting");
    }, 30_000);
  },
);
