/**
 * The cells every coding CLI is judged on, run inside its own loopback-only network namespace: signed in ahead; a
 * first sign-in approved at once, after 70 s, and with no browser; the seed flow; a 70 s call; a misspelt flag and
 * the `/v2` URL. Each asserts what the host showed (its output) and what the scripted model was offered and sent.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BRIDGE_BIN } from "../hosts/host-libraries.js";
import { browserEnv, chromiumMissing, type Person, startPerson } from "../hosts/person.js";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";
import { HOST_CLIS, type HostCli, type HostRun, runHost, type StdioServer } from "./hosts.js";
import { type ModelApi, startModelApi } from "./model-api.js";

const CONSENT_BROWSER = resolve(import.meta.dirname, "../bridge/fixtures/consent-browser.mjs");
/** mcp-remote in place of the bridge, for the notes' comparison (`CHAT_HOSTS_SERVER=mcp-remote`). */
const MCP_REMOTE = process.env.CHAT_HOSTS_SERVER === "mcp-remote";
const NO_DESKTOP = { DISPLAY: "", WAYLAND_DISPLAY: "" };
/** A host's whole headless run may take this long (the 70 s cells wait for the person or the server). */
const RUN_MS = 200_000;
const LATE_MS = 70_000;

/** Why this process cannot run hosts: it is not inside a network namespace whose only interface is loopback. */
export function notLoopbackOnly(): string | undefined {
  const links = Object.keys(networkInterfaces());
  return links.length === 1 && links[0] === "lo"
    ? undefined
    : `network interfaces ${links.join(", ")}: not a loopback-only namespace (npm run test:hosts makes one per host)`;
}

const prompts = {
  seed: `SCENARIO:seed ${"Set up a database for my app"} with the chat tools.`,
  list: "SCENARIO:list List my chats with the chat tools.",
  create: "SCENARIO:create Start a chat that sets up a database for my app.",
};

/** The stdio server entry: the built bin as `npx -y chat-mcp-bridge <url>` runs it, or mcp-remote. */
function chatServer(url: string, env: Record<string, string>, flags: string[] = []): StdioServer {
  const base = { PATH: process.env.PATH ?? "", ...NO_DESKTOP, ...env };
  if (MCP_REMOTE) {
    const bin = join(
      process.env.CHAT_TEST_CACHE_DIR ?? "",
      "hosts/mcp-remote@0.15.1/node_modules/mcp-remote/dist/proxy.js",
    );
    return {
      command: process.execPath,
      args: [bin, url, ...flags],
      env: { ...base, MCP_REMOTE_CONFIG_DIR: join(env.CHAT_CONFIG_DIR ?? "", "mcp-auth") },
    };
  }
  return { command: process.execPath, args: [BRIDGE_BIN, "--token-store", "file", ...flags, url], env: base };
}

const MCP_REMOTE_DIST = join(
  process.env.CHAT_TEST_CACHE_DIR ?? "",
  "hosts/mcp-remote@0.15.1/node_modules/mcp-remote/dist",
);

/**
 * Signs in ahead, approved at once by a scripted browser on the server's real pages: `chat-mcp-bridge login`, or
 * for mcp-remote its own `mcp-remote-client` (its `open` honours $BROWSER through xdg-open), ended once stored.
 */
async function loginAhead(url: string, configDir: string): Promise<void> {
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: configDir,
    CHAT_CONFIG_DIR: configDir,
    MCP_REMOTE_CONFIG_DIR: join(configDir, "mcp-auth"),
    BROWSER: `${process.execPath} ${CONSENT_BROWSER}`,
    CONSENT_ACCOUNT: "acme",
  };
  // Not execFileSync: the reference server answering it runs in this process.
  if (!MCP_REMOTE) {
    await promisify(execFile)(process.execPath, [BRIDGE_BIN, "login", "--token-store", "file", url], {
      env,
      timeout: 60_000,
    });
    return;
  }
  await oneSignInAtATime(async () => {
    const child = execFile(process.execPath, [join(MCP_REMOTE_DIST, "client.js"), url], {
      env,
      timeout: 60_000,
    });
    try {
      if (!(await until(() => loginStored(configDir), 60_000)))
        throw new Error("mcp-remote-client stored no login");
    } finally {
      child.kill();
    }
  });
}

let signIns: Promise<unknown> = Promise.resolve();
/**
 * For mcp-remote, one sign-in at a time: every mcp-remote of a server URL takes the same callback port (derived
 * from the URL), so two cells signing in side by side would lose one login to the other, which no user sees.
 */
function oneSignInAtATime<T>(signIn: () => Promise<T>): Promise<T> {
  if (!MCP_REMOTE) return signIn();
  const turn = signIns.then(signIn);
  signIns = turn.catch(() => {});
  return turn;
}

/** True once a login with tokens is stored in `configDir` (the bridge's file store, or mcp-remote's folder). */
function loginStored(configDir: string): boolean {
  if (MCP_REMOTE) {
    const dir = join(configDir, "mcp-auth");
    return (
      existsSync(dir) &&
      readdirSync(dir, { recursive: true }).some((name) => String(name).endsWith("_tokens.json"))
    );
  }
  const auth = join(configDir, "auth");
  if (!existsSync(auth)) return false;
  return readdirSync(auth)
    .filter((name) => name.endsWith(".json"))
    .some((name) => "tokens" in JSON.parse(readFileSync(join(auth, name), "utf8")));
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  for (
    const started = Date.now();
    Date.now() - started < timeoutMs;
    await new Promise((r) => setTimeout(r, 250))
  )
    if (check()) return true;
  return check();
}

interface Cell {
  run: HostRun;
  /** When the host was started (epoch ms). */
  started: number;
  model: ModelApi;
  /** What the host showed: its stdout and stderr. */
  shown: string;
}

/** What a cell records for docs/hosts.md: printed with a marker the runner collects. */
function note(host: string, cell: string, facts: Record<string, unknown>): void {
  console.info(
    `HOSTS-NOTE ${JSON.stringify({ host, cell, server: MCP_REMOTE ? "mcp-remote" : "bridge", ...facts })}`,
  );
}

/** A long output's start and end. */
const clip = (text: string) =>
  text.length > 2400 ? `${text.slice(0, 1600)}\n[...]\n${text.slice(-800)}` : text;

const summary = (cell: Cell) => ({
  code: cell.run.code,
  ms: cell.run.ms,
  agentTurns: cell.model.agentTurns().length,
  firstTurnAfterMs: (cell.model.agentTurns()[0]?.at ?? Number.NaN) - cell.started,
  firstOffered: cell.model.firstReach() ?? null,
  searched: cell.model.agentTurns()[0]?.move?.kind === "search",
  answer: cell.model.lastAnswer()?.slice(0, 400),
  stdout: clip(cell.run.stdout),
  stderr: clip(cell.run.stderr),
});

/** Every bridge tool call the model made in its last turn, with the results the host sent back. */
const results = (model: ModelApi) =>
  model
    .agentTurns()
    .at(-1)
    ?.turns.filter((turn) => turn.result !== undefined) ?? [];

export function describeHostCells(hostName: string): void {
  const host = HOST_CLIS.find((h) => h.name === hostName) as HostCli;
  const missing = notLoopbackOnly();
  const models: ModelApi[] = [];
  let server: ReferenceServer;
  let slowServer: ReferenceServer;
  let person: Person;

  async function cell(
    name: string,
    mcpUrl: string,
    configDir: string,
    prompt: string,
    env: Record<string, string> = {},
    flags: string[] = [],
  ): Promise<Cell> {
    const model = await startModelApi();
    models.push(model);
    const home = scratchDir(`cmb-host-${host.name}-home-`);
    const started = Date.now();
    const run = await runHost(
      host,
      {
        home,
        modelUrl: model.url,
        server: chatServer(mcpUrl, { CHAT_CONFIG_DIR: configDir, ...env }, flags),
      },
      prompt,
      RUN_MS,
    );
    const result = { run, model, started, shown: `${run.stdout}\n${run.stderr}` };
    note(host.name, name, summary(result));
    return result;
  }

  /** A first sign-in: the run the person signs in during, then (when that run had no tools) the next start's. */
  function firstSignIn(
    name: string,
    env: Record<string, string>,
    approve: ((urlFile: string) => Promise<unknown>) | undefined,
  ) {
    return oneSignInAtATime(() => signInOnce(name, env, approve));
  }

  async function signInOnce(
    name: string,
    env: Record<string, string>,
    approve: ((urlFile: string) => Promise<unknown>) | undefined,
  ) {
    const configDir = scratchDir(`cmb-host-${host.name}-config-`);
    const browser = browserEnv(configDir);
    const approved = approve?.(browser.urlFile);
    approved?.catch(() => {});
    const first = await cell(name, server.mcpUrl, configDir, prompts.list, { ...browser.env, ...env });
    const signedIn = await until(() => loginStored(configDir), approve ? LATE_MS + 60_000 : 0);
    const listed = results(first.model).some((turn) => /list_chats$/.test(turn.name));
    const next =
      listed || !signedIn
        ? undefined
        : await cell(`${name} (next start)`, server.mcpUrl, configDir, prompts.list, NO_DESKTOP);
    return { first, next, signedIn, configDir, browser };
  }

  describe.concurrent(
    `${host.name} (${MCP_REMOTE ? "mcp-remote" : "the bridge"})`,
    needs("loopback-only network namespace", missing),
    () => {
      beforeAll(async () => {
        server = await startReferenceServer({
          port: 0,
          rateLimit: false,
          deviceAuthorization: { intervalSeconds: 1 },
        });
        slowServer = await startReferenceServer({ port: 0, rateLimit: false, assistantDelayMs: 70_000 });
        if (!chromiumMissing) person = await startPerson();
      }, 60_000);
      afterAll(async () => {
        for (const model of models) await model.close();
        await person?.close();
        await server?.close();
        await slowServer?.close();
      });

      it(
        "signed in ahead: the first turn offers the chat tools and a call works",
        async () => {
          const configDir = scratchDir(`cmb-host-${host.name}-config-`);
          await loginAhead(server.mcpUrl, configDir);
          const { model, shown } = await cell("signed in", server.mcpUrl, configDir, prompts.list);
          expect(model.firstReach()?.some((tool) => /list_chats$/.test(tool))).toBe(true);
          expect(results(model).map((turn) => turn.name.replace(/.*?(list_chats)$/, "$1"))).toEqual([
            "list_chats",
          ]);
          expect(shown).toContain("SCRIPT: listed");
        },
        RUN_MS + 30_000,
      );

      it(
        "the seed flow: six tool results, the preview reaches the user",
        async () => {
          const configDir = scratchDir(`cmb-host-${host.name}-config-`);
          await loginAhead(server.mcpUrl, configDir);
          const { model, shown } = await cell("seed flow", server.mcpUrl, configDir, prompts.seed);
          expect(results(model).length, model.lastAnswer()).toBe(6);
          expect(shown).toMatch(/seed flow done, 6 tool results, preview http:\/\/127\.0\.0\.1:\d+\//);
        },
        RUN_MS + 30_000,
      );

      it(
        "a 70 s call: create_chat's result comes back",
        async () => {
          const configDir = scratchDir(`cmb-host-${host.name}-config-`);
          await loginAhead(slowServer.mcpUrl, configDir);
          const { model, shown } = await cell("70 s call", slowServer.mcpUrl, configDir, prompts.create);
          expect(model.lastAnswer()).toMatch(/created chat /);
          expect(shown).toMatch(/created chat /);
        },
        RUN_MS + 30_000,
      );

      // The bridge's own flags: mcp-remote has other ones, so these two cells are not its.
      const notMcpRemote = MCP_REMOTE ? "mcp-remote 0.15.1 has other flags and no /v2 hint" : undefined;
      describe("the bridge's usage errors", needs("the bridge's flags", notMcpRemote), () => {
        it(
          "a misspelt flag (--token-stor): the usage error reaches the user",
          async () => {
            const configDir = scratchDir(`cmb-host-${host.name}-config-`);
            const { shown } = await cell("misspelt flag", server.mcpUrl, configDir, prompts.list, {}, [
              "--token-stor",
              "file",
            ]);
            expect(shown).toContain("--token-stor");
            expect(shown).toMatch(/Did you mean --token-store/);
          },
          RUN_MS + 30_000,
        );

        it(
          "the /v2 URL: the usage error says to use /mcp",
          async () => {
            const configDir = scratchDir(`cmb-host-${host.name}-config-`);
            const { shown } = await cell("/v2 URL", `${server.url}/v2`, configDir, prompts.list);
            expect(shown).toMatch(/\/v2/);
            expect(shown).toMatch(/\/mcp\b/);
          },
          RUN_MS + 30_000,
        );
      });

      it(
        "no browser: the sign-in link or device code reaches the user in the host",
        async () => {
          const { first } = await firstSignIn("no browser", { BROWSER: "/bin/false" }, undefined);
          // The reference server's verification page or a loopback sign-in link, in what the host showed.
          expect(first.shown).toMatch(
            new RegExp(
              `${server.url.replace(/[.:/]/g, "\\$&")}/(device|oauth|authorize)|127\\.0\\.0\\.1:\\d+/start/`,
            ),
          );
        },
        RUN_MS + 30_000,
      );

      describe.concurrent("a person in headless Chromium", needs("chromium", chromiumMissing), () => {
        for (const [label, thinkMs] of [
          ["approved at once", 0],
          ["approved after 70 s", LATE_MS],
        ] as const) {
          it(
            `first sign-in ${label}: the tools reach the model in this run or the next start`,
            async () => {
              const { first, next, signedIn } = await firstSignIn(label, {}, (urlFile) =>
                person.approve(urlFile, { thinkMs }),
              );
              expect(signedIn, "the login was stored").toBe(true);
              // Never an empty turn with no word: this run had the tools, or a sign-in tool.
              expect(
                first.model.firstReach()?.length ?? 0,
                "the first turn offered none of the bridge's tools",
              ).toBeGreaterThan(0);
              const listed = results(next?.model ?? first.model).filter((turn) =>
                /list_chats$/.test(turn.name),
              );
              expect(listed.length, "list_chats was called and answered").toBe(1);
            },
            LATE_MS + 2 * RUN_MS + 60_000,
          );
        }
      });
    },
  );
}
