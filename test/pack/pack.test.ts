/** The published package: `npm pack` holds only what users need, and its bins, exports and types work from a fresh install. */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { TOOL_NAMES } from "../../src/wire/index.js";
import { initializeLine } from "../bridge/fixtures/spawn-bridge.js";
import {
  needsOpenssl,
  type ProxiedService,
  startProxiedService,
} from "../network/fixtures/proxied-service.js";
import { scratchDir } from "../support/scratch-dir.js";

const run = promisify(execFile);
const repo = resolve(".");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const httpBrowser = resolve("test/auth/fixtures/http-browser.mjs");

const PackageJsonSchema = z.looseObject({
  name: z.string(),
  version: z.string(),
  bin: z.record(z.string(), z.string()),
  exports: z.record(z.string(), z.union([z.string(), z.looseObject({ types: z.string().optional() })])),
  dependencies: z.record(z.string(), z.string()).optional(),
  peerDependencies: z.record(z.string(), z.string()).optional(),
  optionalDependencies: z.record(z.string(), z.string()).optional(),
});
const PackOutputSchema = z.array(
  z.looseObject({ filename: z.string(), files: z.array(z.looseObject({ path: z.string() })) }),
);

const pkg = PackageJsonSchema.parse(JSON.parse(readFileSync(join(repo, "package.json"), "utf8")));
/** The repo's installed version of a dev package, so the fresh install resolves what the cache already holds. */
const installedVersion = (name: string) =>
  z
    .object({ version: z.string() })
    .parse(JSON.parse(readFileSync(join(repo, "node_modules", name, "package.json"), "utf8"))).version;

const work = scratchDir("cmb-pack-");
const installDir = join(work, "app");
const installedPackage = join(installDir, "node_modules", "chat-mcp-bridge");
let tarball: string;
let packed: string[];
/** The bundled bin files in the tarball, one per bin. */
const binBundles = () => packed.filter((path) => path.startsWith("dist/bin/"));

/** Runs an npm command quietly; on failure the error carries npm's own message. */
async function npmRun(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run(npm, [...args, "--loglevel=error", "--no-audit", "--no-fund"], {
    cwd,
    env: { ...process.env, npm_config_update_notifier: "false" },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** Runs Node in the install dir (module resolution as a user's project sees it). */
async function nodeIn(dir: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { stdout } = await run(process.execPath, args, { cwd: dir, env, timeout: 60_000 });
  return stdout.trim();
}

beforeAll(async () => {
  for (const built of [
    "dist/index.js",
    "dist/index.d.ts",
    "dist/bin/chat-mcp-bridge.cjs",
    "dist/bin/chat-cli.cjs",
  ]) {
    if (!existsSync(join(repo, built))) throw new Error(`${built} is missing: run \`npm run build\` first`);
  }
  // `npm test` builds first (pretest), so the tarball holds the current code without building twice here.
  const output = PackOutputSchema.parse(
    JSON.parse(await npmRun(["pack", "--json", "--ignore-scripts", "--pack-destination", work], repo)),
  );
  const [entry] = output;
  if (!entry) throw new Error("npm pack reported no tarball");
  tarball = join(work, entry.filename);
  packed = entry.files.map((file) => file.path);

  // A user's fresh project: the tarball, msw (the optional peer of ./testing) and Node's types for the type check.
  // Optional keychain modules are left out: keytar builds natively, and the file-store fallback is under test below.
  mkdirSync(installDir);
  writeFileSync(
    join(installDir, "package.json"),
    JSON.stringify({ name: "pack-check", private: true, type: "module" }),
  );
  await npmRun(
    [
      "install",
      tarball,
      `msw@${installedVersion("msw")}`,
      `@types/node@${installedVersion("@types/node")}`,
      "--prefer-offline",
      "--omit=optional",
      "--ignore-scripts",
    ],
    installDir,
  );
}, 300_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe("the tarball holds only what users need", () => {
  it("has the bin shims, the compiled entry points, README and LICENSE", () => {
    for (const path of Object.values(pkg.bin)) expect(packed).toContain(path.replace(/^\.\//, ""));
    for (const file of ["package.json", "README.md", "LICENSE", "dist/index.js", "dist/server/index.js"]) {
      expect(packed).toContain(file);
    }
    expect(packed).toContain("dist/testing/index.js");
  });

  it("carries the licences of the code its bundles hold, the vendored packages among them", () => {
    expect(packed).toContain("dist/THIRD-PARTY-LICENSES.txt");
    const licences = readFileSync(join(installedPackage, "dist/THIRD-PARTY-LICENSES.txt"), "utf8");
    for (const name of [
      "undici",
      "https-proxy-agent",
      "tough-cookie",
      "tldts",
      "zod",
      "@modelcontextprotocol/client",
    ])
      expect(licences).toContain(`\n${name}@`);
  });

  it("has no tests, TypeScript sources, demo, manual or repo tooling; the library's maps only beside their files", () => {
    // The manual (docs/) stays in the repository: npm's page opens the README's links to it there.
    const unwanted = packed.filter(
      (path) =>
        /^(src|test|bench|scripts|docs|\.ci|\.changeset|\.github|node_modules)\//.test(path) ||
        path.startsWith("dist/demo/") ||
        (path.endsWith(".map") && !packed.includes(path.slice(0, -4))) ||
        /\.test\.[cm]?[jt]s$/.test(path) ||
        (path.endsWith(".ts") && !path.endsWith(".d.ts")) ||
        /^(tsconfig.*|biome|vitest\.config\.ts)/.test(path),
    );
    expect(unwanted).toEqual([]);
  });

  it("ships one CommonJS bundle per bin, which loads ES-only packages with import(), and the old-Node check the shims load first", () => {
    expect(binBundles().sort()).toEqual([
      "dist/bin/chat-cli.cjs",
      "dist/bin/chat-mcp-bridge.cjs",
      "dist/bin/start-refusal.cjs",
    ]);
    // `require` of an ES module package works only on Node >= 20.19 and 22.12.
    const requiresEsOnly = binBundles().filter((bundle) =>
      /\brequire\(\s*["'](?:open|https-proxy-agent)["']\s*\)/.test(
        readFileSync(join(installedPackage, bundle), "utf8"),
      ),
    );
    expect(requiresEsOnly).toEqual([]);
    const scope = JSON.parse(readFileSync(join(installedPackage, "bin", "package.json"), "utf8"));
    expect(scope).toEqual({ type: "commonjs" });
  });

  it("has import and require for every export, types first in each, and their files", () => {
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === "string") continue; // ./package.json
      for (const condition of ["import", "require"]) {
        const branch = (target as Record<string, Record<string, string>>)[condition];
        expect(branch, `${condition} of ${subpath}`).toBeDefined();
        expect(Object.keys(branch!)[0], `first condition of ${subpath} ${condition}`).toBe("types");
        for (const file of Object.values(branch!)) expect(packed).toContain(file.replace(/^\.\//, ""));
      }
    }
  });

  it("ships the library readable, with source maps", () => {
    for (const entry of [
      "dist/index.js",
      "dist/server/index.js",
      "dist/testing/index.js",
      "dist/web/index.js",
    ]) {
      expect(packed).toContain(`${entry}.map`);
      const code = readFileSync(join(installedPackage, entry), "utf8");
      expect(code).toContain(`//# sourceMappingURL=${entry.split("/").at(-1)}.map`);
      expect(code.split("\n").length, `${entry} is not one minified line`).toBeGreaterThan(20);
    }
  });
});

/** Bytes of the files under `dir` (their sizes, not blocks: the same figure on every file system). */
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/**
 * The tarball alone, optional dependencies and install scripts included, as npx installs it into its cache and as a
 * user's MCP client runs it: one install for the two describes that read it (npm's tree is the same either way).
 */
const npxDir = join(work, "npx");
let npxInstalled: Promise<void> | undefined;
function npxInstall(): Promise<void> {
  npxInstalled ??= (async () => {
    mkdirSync(npxDir);
    writeFileSync(join(npxDir, "package.json"), JSON.stringify({ name: "npx-like", private: true }));
    await npmRun(["install", tarball, "--prefer-offline"], npxDir);
  })();
  return npxInstalled;
}

describe("what `npx -y chat-mcp-bridge` installs", () => {
  const LockSchema = z.object({
    packages: z.record(z.string(), z.looseObject({ hasInstallScript: z.boolean().optional() })),
  });
  const alone = npxDir;
  let tree: [string, { hasInstallScript?: boolean }][];

  beforeAll(async () => {
    await npxInstall();
    const lock = LockSchema.parse(
      JSON.parse(readFileSync(join(alone, "node_modules", ".package-lock.json"), "utf8")),
    );
    tree = Object.entries(lock.packages).filter(([path]) => path.startsWith("node_modules/"));
  }, 300_000);

  it("is fewer than 50 packages, none with an install script, and none of the MCP SDK (the bundles carry it)", () => {
    expect(tree.length).toBeLessThan(50);
    expect(tree.filter(([, meta]) => meta.hasInstallScript).map(([path]) => path)).toEqual([]);
    expect(tree.map(([path]) => path).filter((path) => path.includes("@modelcontextprotocol/"))).toEqual([]);
  });

  it("depends at run time on the packages users name only: the proxy agents, the cookie jar and the SSE parser travel inside it", () => {
    expect(Object.keys(pkg.dependencies ?? {}).sort()).toEqual(["ky", "open", "zod"]);
    const carried = new Set([
      "undici",
      "https-proxy-agent",
      "agent-base",
      "tough-cookie",
      "tldts",
      "tldts-core",
      "eventsource-parser",
    ]);
    const installed = tree.map(([path]) =>
      path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length),
    );
    expect(installed.filter((name) => carried.has(name))).toEqual([]);
  });

  it("holds under 18.5 MB of files (zod's 6 MB and the keychain's 3.5 MB platform binary are most of it; the library's readable bundles, source maps and web build 1.3 MB)", () => {
    expect(treeBytes(join(alone, "node_modules")) / 1e6).toBeLessThan(18.5);
  });

  it("ships declarations that name no package users do not install", () => {
    const installable = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
    ]);
    const declarations = packed.filter((path) => path.endsWith(".d.ts") || path.endsWith(".d.cts"));
    expect(declarations.length).toBeGreaterThan(0);
    const foreign = declarations.flatMap((path) =>
      [
        ...readFileSync(join(installedPackage, path), "utf8").matchAll(
          /(?:from|import\()\s*["']([^."'][^"']*)["']/g,
        ),
      ]
        .map(([, specifier]) => specifier!)
        .filter((specifier) => !specifier.startsWith("node:"))
        .map((specifier) =>
          specifier
            .split("/")
            .slice(0, specifier.startsWith("@") ? 2 : 1)
            .join("/"),
        )
        .filter((name) => !installable.has(name))
        .map((name) => `${path}: ${name}`),
    );
    expect(foreign).toEqual([]);
  });
});

describe("both bins run from a fresh install", () => {
  it.each(Object.keys(pkg.bin))("npx --no-install %s --version prints the package version", async (bin) => {
    const { stdout } = await run(npm, ["exec", "--no-install", "--", bin, "--version"], {
      cwd: installDir,
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe(pkg.version);
  });
});

describe("chat-cli serve from a fresh install (not a checkout)", () => {
  it("offers no `npm link`, and its stdio config starts the bridge from an empty folder", async () => {
    const child = spawn(
      process.execPath,
      [join(installedPackage, "bin/chat-cli.js"), "serve", "--port", "0"],
      {
        cwd: installDir,
        env: { ...process.env, CHAT_CONFIG_DIR: join(work, "serve-config") },
      },
    );
    let stdout = "";
    child.stdout.setEncoding("utf8");
    const printed = new Promise<void>((done) =>
      child.stdout.on("data", (text: string) => {
        stdout += text;
        if (stdout.includes("clients with remote support")) done();
      }),
    );
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      await printed;
      await startsFromEmptyFolder(stdout);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});

/** The printed stdio config, run as an MCP client runs it: from an empty folder, answering `initialize`. */
async function startsFromEmptyFolder(stdout: string): Promise<void> {
  expect(stdout).not.toContain("npm link");
  expect(stdout).not.toContain("this checkout");
  const configLine = stdout.split("MCP client config (stdio bridge):\n")[1]?.split("\n")[0] ?? "";
  const config = z
    .object({ mcpServers: z.object({ chat: z.object({ command: z.string(), args: z.array(z.string()) }) }) })
    .parse(JSON.parse(configLine)).mcpServers.chat;
  expect(config).toEqual({
    command: "node",
    args: [
      join(installedPackage, "bin/chat-mcp-bridge.js"),
      expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/),
    ],
  });
  // An MCP client starts it from wherever it runs: an empty folder with no package.json.
  const elsewhere = join(work, "elsewhere");
  mkdirSync(elsewhere, { recursive: true });
  const bridge = spawn(config.command === "node" ? process.execPath : config.command, config.args, {
    cwd: elsewhere,
    env: {
      ...process.env,
      CHAT_CONFIG_DIR: join(work, "serve-config"),
      BROWSER: join(work, "no-such-browser"),
    },
  });
  const bridgeExited = new Promise((resolve) => bridge.once("exit", resolve));
  bridge.stdin.write(`${initializeLine(1)}\n`);
  const [answer] = (await once(bridge.stdout.setEncoding("utf8"), "data")) as [string];
  bridge.stdin.end();
  await bridgeExited;
  expect(JSON.parse(answer.split("\n")[0] ?? "")).toMatchObject({
    id: 1,
    result: { serverInfo: expect.anything() },
  });
}

describe("every export imports from a fresh install", () => {
  it('import { ChatClient } from "chat-mcp-bridge" gives a working client class', async () => {
    const out = await nodeIn(installDir, [
      "--input-type=module",
      "-e",
      'import { ChatClient, ChatSchema, ConflictError } from "chat-mcp-bridge";' +
        'const client = new ChatClient({ baseUrl: "http://127.0.0.1:9", token: "t" });' +
        "console.log(typeof client.createChat, typeof client.getPendingTask, typeof ChatSchema.parse, typeof ConflictError);",
    ]);
    expect(out).toBe("function function function function");
  });

  it('"chat-mcp-bridge/server" starts a reference server that the packaged ChatClient can use', async () => {
    const out = await nodeIn(installDir, [
      "--input-type=module",
      "-e",
      'import { ChatClient } from "chat-mcp-bridge";' +
        'import { startReferenceServer } from "chat-mcp-bridge/server";' +
        "const server = await startReferenceServer({ port: 0 });" +
        "try {" +
        "  const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme });" +
        '  const chat = await client.createChat({ message: "Add a database" });' +
        "  const pending = await client.getPendingTask(chat.id);" +
        "  console.log(JSON.stringify({ kind: pending?.kind, integrations: pending?.integrations }));" +
        "} finally { await server.close(); }",
    ]);
    expect(JSON.parse(out)).toEqual({ kind: "integration", integrations: ["Neon"] });
  });

  it('"chat-mcp-bridge/testing" gives msw handlers', async () => {
    const out = await nodeIn(installDir, [
      "--input-type=module",
      "-e",
      'import { createChatHandlers } from "chat-mcp-bridge/testing";' +
        "const { handlers } = createChatHandlers();" +
        "console.log(Array.isArray(handlers) && handlers.length > 0);",
    ]);
    expect(out).toBe("true");
  });
});

/** A user's code in TypeScript (ESM and CommonJS), written against the package's documented surface. */
const USER_TYPES = resolve("test/pack/user-types");

describe("types resolve for every export (strict, skipLibCheck off)", () => {
  // One tsc program for every user file: the declarations' lib check (zod's, Node's, the package's) is most of
  // its time, and it is the same for all of them.
  it("a user's TypeScript files type-check against the installed package: narrow on type, catch typos, agree with the schemas, and resolve for import and require", async () => {
    writeFileSync(
      join(installDir, "uses-package.ts"),
      [
        'import { ChatClient, type Chat, type PendingTask, type Task, ConflictError, findPendingPermissions } from "chat-mcp-bridge";',
        'import { startReferenceServer, type ReferenceServer } from "chat-mcp-bridge/server";',
        'import { createChatHandlers } from "chat-mcp-bridge/testing";',
        "const task: Task = { type: 'confirmed-steps', connectedIntegrationNames: ['Neon'] };",
        "export async function flow(): Promise<Chat> {",
        "  const server: ReferenceServer = await startReferenceServer({ port: 0, autoApprove: 'acme' });",
        "  const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme });",
        "  const chat = await client.createChat({ message: 'database' });",
        "  const pending: PendingTask | null = await client.getPendingTask(chat.id);",
        "  if (pending?.kind === 'permissions') findPendingPermissions(pending.message);",
        "  try { await client.resolveTask(chat.id, task); } catch (e) { if (!(e instanceof ConflictError)) throw e; }",
        "  await server.close();",
        "  return chat;",
        "}",
        "export const handlers = createChatHandlers().handlers;",
        "",
      ].join("\n"),
    );
    const userFiles = readdirSync(USER_TYPES).filter((name) => /\.c?ts$/.test(name));
    expect(userFiles.sort()).toEqual(["commonjs-user.cts", "narrowing.ts", "schemas-agree.ts", "typos.ts"]);
    for (const name of userFiles) writeFileSync(join(installDir, name), readFileSync(join(USER_TYPES, name)));
    writeFileSync(
      join(installDir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2023", "DOM"],
          noEmit: true,
          skipLibCheck: false,
          // TypeScript's own lib files need no checking here: the package's declarations, msw's and Node's do.
          skipDefaultLibCheck: true,
          types: ["node"],
        },
        files: ["uses-package.ts", ...userFiles],
      }),
    );
    const tsc = join(repo, "node_modules/typescript/bin/tsc");
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: installDir }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(result).toBe("");
  }, 180_000);
});

describe("a user's project still on msw 2 (the peer range takes 2 and 3)", () => {
  const msw2Dir = join(work, "app-msw2");

  beforeAll(async () => {
    mkdirSync(msw2Dir);
    writeFileSync(
      join(msw2Dir, "package.json"),
      JSON.stringify({ name: "msw2-check", private: true, type: "module" }),
    );
    await npmRun(
      [
        "install",
        tarball,
        "msw@^2",
        `@types/node@${installedVersion("@types/node")}`,
        "--prefer-offline",
        "--omit=optional",
        "--ignore-scripts",
      ],
      msw2Dir,
    );
  }, 300_000);

  it("the handlers serve a ChatClient through msw 2's setupServer, and type-check against msw 2's types", async () => {
    const mswMajor = z
      .object({ version: z.string() })
      .parse(JSON.parse(readFileSync(join(msw2Dir, "node_modules/msw/package.json"), "utf8")))
      .version.split(".")[0];
    expect(mswMajor).toBe("2");
    const script = [
      'import { setupServer } from "msw/node";',
      'import { ChatClient } from "chat-mcp-bridge";',
      'import { createChatHandlers } from "chat-mcp-bridge/testing";',
      'const chat = createChatHandlers({ baseUrl: "http://chat.test" });',
      "const server = setupServer(...chat.handlers);",
      'server.listen({ onUnhandledRequest: "error" });',
      "const client = new ChatClient({ baseUrl: chat.baseUrl, token: chat.apiKeys.acme });",
      'const created = await client.createChat({ message: "hello" });',
      "const page = await client.listChats();",
      "server.close();",
      "console.log(page.data.some((c: { id: string }) => c.id === created.id));",
      "",
    ].join("\n");
    writeFileSync(join(msw2Dir, "uses-msw2.ts"), script);
    writeFileSync(
      join(msw2Dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
        },
        files: ["uses-msw2.ts"],
      }),
    );
    const tsc = join(repo, "node_modules/typescript/bin/tsc");
    const typeErrors = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: msw2Dir }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(typeErrors).toBe("");
    // The same code as plain JavaScript: the types are gone, what runs is msw 2 under our handlers.
    const js = script.replace("(c: { id: string })", "(c)");
    expect(await nodeIn(msw2Dir, ["--input-type=module", "-e", js])).toBe("true");
  }, 180_000);
});

describe("without the optional keychain modules, tokens go to the 0600 file store", () => {
  let server: ReferenceServer;
  const configDir = scratchDir("cmb-pack-config-");
  const installedBridge = () => join(installedPackage, "bin/chat-mcp-bridge.js");

  beforeAll(async () => {
    server = await startReferenceServer({ autoApprove: "acme" });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  it("chat-mcp-bridge login (token store auto) signs in and saves a 0600 file", async () => {
    await bridgeLogin(installedBridge(), installDir, configDir, server.mcpUrl);
    const files = listFiles(configDir).filter((file) => !file.endsWith(".lock"));
    expect(files.length).toBeGreaterThan(0);
    if (process.platform !== "win32") {
      const modes = files.map((file) => (statSync(file).mode & 0o777).toString(8));
      expect(modes).toContain("600");
    }
  });

  it("the installed bridge relays with the stored login, opening no browser", async () => {
    expect(await toolsThroughBridge(installedBridge(), installDir, configDir, server.mcpUrl)).toEqual(
      [...TOOL_NAMES].sort(),
    );
  });

  it("answers its first message without ES module machinery", async () => {
    const { atAnswer } = await modulesAtFirstAnswer(installedBridge(), installDir, configDir, server.mcpUrl);
    expect(atAnswer).toContain("NativeModule http");
    expect(await esMachineryBeyondCommonJs(atAnswer)).toEqual([]);
  });
});

describe("behind a proxy, a fresh install carries its own proxy agents", needsOpenssl, () => {
  let service: ProxiedService;
  const configDir = scratchDir("cmb-pack-proxy-");
  /** The user's proxy and company root; chat.test resolves only through the proxy. */
  const proxyEnv = () => ({
    HTTPS_PROXY: service.proxyUrl,
    NODE_EXTRA_CA_CERTS: service.caFile,
    NO_PROXY: "",
  });
  const targets = (before: number) =>
    service
      .proxyLog()
      .slice(before)
      .map((line) => line.target);

  beforeAll(async () => {
    if (needsOpenssl.skip) return;
    service = await startProxiedService({ autoApprove: "acme" });
  });
  afterAll(async () => {
    await service?.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('ChatClient of "chat-mcp-bridge" reaches a host only the proxy resolves', async () => {
    const before = service.proxyLog().length;
    const out = await nodeIn(
      installDir,
      [
        "--input-type=module",
        "-e",
        'import { ChatClient } from "chat-mcp-bridge";' +
          "const client = new ChatClient({ baseUrl: process.env.SERVICE_URL, token: process.env.SERVICE_TOKEN });" +
          'const chat = await client.createChat({ message: "through the proxy" });' +
          "console.log((await client.getChat(chat.id)).id === chat.id);",
      ],
      {
        ...process.env,
        ...proxyEnv(),
        SERVICE_URL: service.httpsUrl,
        SERVICE_TOKEN: service.server.apiKeys.acme as string,
      },
    );
    expect(out).toBe("true");
    expect(targets(before)).toContain(new URL(service.httpsUrl).host);
  });

  it("the installed bridge signs in and relays through the proxy", async () => {
    const before = service.proxyLog().length;
    const bridge = join(installedPackage, "bin/chat-mcp-bridge.js");
    const mcpUrl = `${service.httpsUrl}/mcp`;
    await bridgeLogin(bridge, installDir, configDir, mcpUrl, proxyEnv());
    expect(await toolsThroughBridge(bridge, installDir, configDir, mcpUrl, proxyEnv())).toEqual(
      [...TOOL_NAMES].sort(),
    );
    expect(targets(before)).toContain(new URL(service.httpsUrl).host);
  });
});

/**
 * The built-in modules an installed bridge has loaded when it writes its first answer (to an `initialize`), through a
 * preload that wraps `process.stdout.write`.
 */
async function modulesAtFirstAnswer(
  bridge: string,
  cwd: string,
  configDir: string,
  mcpUrl: string,
): Promise<{ atAnswer: string[] }> {
  const preload = join(work, "loaded-at-first-answer.cjs");
  writeFileSync(
    preload,
    `const write = process.stdout.write.bind(process.stdout);
let seen = false;
process.stdout.write = (...args) => {
  if (!seen) process.stderr.write("\\nAT ANSWER " + process.moduleLoadList.join(",") + "\\n");
  seen = true;
  return write(...args);
};`,
  );
  const child = spawn(process.execPath, ["--require", preload, bridge, mcpUrl], {
    cwd,
    env: { ...process.env, CHAT_CONFIG_DIR: configDir, BROWSER: join(work, "no-such-browser") },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin.write(`${initializeLine(1)}\n`);
  const [answer] = (await once(child.stdout.setEncoding("utf8"), "data")) as [string];
  expect(JSON.parse(answer.split("\n")[0]!)).toMatchObject({
    id: 1,
    result: { serverInfo: expect.anything() },
  });
  child.stdin.end();
  await exited;
  const modulesAt = (label: string) => stderr.split(`\n${label} `)[1]!.split("\n")[0]!.split(",");
  return { atAnswer: modulesAt("AT ANSWER") };
}

/** ES module loader modules in `loaded` beyond what Node loads for a CommonJS `node -e` (Node 24 loads them for both). */
async function esMachineryBeyondCommonJs(loaded: string[]): Promise<string[]> {
  const { stdout } = await run(process.execPath, [
    "-e",
    "process.stdout.write(process.moduleLoadList.join())",
  ]);
  const baseline = new Set(stdout.split(","));
  return loaded.filter((name) => name.includes("/esm/") && !baseline.has(name));
}

/** `chat-mcp-bridge login` of an installed bridge, with a browser that approves over HTTP. */
async function bridgeLogin(
  bridge: string,
  cwd: string,
  configDir: string,
  mcpUrl: string,
  extraEnv: Record<string, string> = {},
): Promise<void> {
  await run(process.execPath, [bridge, "login", mcpUrl], {
    cwd,
    timeout: 60_000,
    env: {
      ...process.env,
      CHAT_CONFIG_DIR: configDir,
      BROWSER: `"${process.execPath}" "${httpBrowser}"`,
      ...extraEnv,
    },
  });
}

/** The sorted tool names an installed bridge relays with its stored login; any new sign-in would fail. */
async function toolsThroughBridge(
  bridge: string,
  cwd: string,
  configDir: string,
  mcpUrl: string,
  extraEnv: Record<string, string> = {},
): Promise<string[]> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bridge, mcpUrl],
    cwd,
    // A browser command that cannot start: any new sign-in would fail the connection.
    env: { ...stringEnv(), CHAT_CONFIG_DIR: configDir, BROWSER: join(work, "no-such-browser"), ...extraEnv },
    stderr: "pipe",
  });
  const client = new Client({ name: "pack-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.map((tool) => tool.name).sort();
  } finally {
    await client.close();
  }
}

/** What npm records for one installed package in node_modules/.package-lock.json. */
const LockedPackageSchema = z.looseObject({
  hasInstallScript: z.boolean().optional(),
  dependencies: z.record(z.string(), z.string()).optional(),
  optionalDependencies: z.record(z.string(), z.string()).optional(),
});
const HiddenLockSchema = z.looseObject({ packages: z.record(z.string(), LockedPackageSchema) });

/** The packages `root` (a node_modules/... path) pulls in, found as Node resolves them: nested first, then up. */
function dependencyClosure(
  packages: Record<string, z.infer<typeof LockedPackageSchema>>,
  root: string,
): string[] {
  const seen = new Set<string>();
  const pending = [root];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    if (seen.has(path)) continue;
    seen.add(path);
    const meta = packages[path];
    for (const name of Object.keys({ ...meta?.dependencies, ...meta?.optionalDependencies })) {
      for (let dir = path; ; dir = dir.slice(0, dir.lastIndexOf("/node_modules/"))) {
        const candidate = `${dir}/node_modules/${name}`;
        if (packages[candidate]) {
          pending.push(candidate);
          break;
        }
        if (!dir.includes("/node_modules/")) {
          if (packages[`node_modules/${name}`]) pending.push(`node_modules/${name}`);
          break;
        }
      }
    }
  }
  return [...seen];
}

describe("a default install of the tarball (what npx runs for an MCP client)", () => {
  const appDir = npxDir;
  const configDir = scratchDir("cmb-pack-default-");
  let server: ReferenceServer;
  let tree: string[];
  let packages: Record<string, z.infer<typeof LockedPackageSchema>>;

  beforeAll(async () => {
    // As a user runs it: optional dependencies and install scripts allowed.
    await npxInstall();
    packages = HiddenLockSchema.parse(
      JSON.parse(readFileSync(join(appDir, "node_modules", ".package-lock.json"), "utf8")),
    ).packages;
    tree = dependencyClosure(packages, "node_modules/chat-mcp-bridge");
    server = await startReferenceServer({ autoApprove: "acme" });
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  it("compiles nothing: no package in the tree has an install script, and keytar is not pulled in", () => {
    expect(tree.filter((path) => packages[path]?.hasInstallScript)).toEqual([]);
    expect(tree.some((path) => path.endsWith("/keytar"))).toBe(false);
    expect(existsSync(join(appDir, "node_modules", "@napi-rs", "keyring"))).toBe(true);
  });

  it("holds fewer than 50 packages: only what the declared runtime dependencies pull in (no SDK v1)", () => {
    // Before the SDK v1 left the dependencies: 114-120 (it alone was 98: express, hono, cors, ajv, ...).
    expect(tree.some((path) => path.endsWith("/@modelcontextprotocol/sdk"))).toBe(false);
    expect(tree.length).toBeGreaterThan(10);
    expect(tree.length, `the installed tree: ${tree.join(", ")}`).toBeLessThan(50);
  });

  it("the bridge signs in (keychain through @napi-rs/keyring, or the 0600 file store) and relays", async () => {
    const bridge = join(appDir, "node_modules", "chat-mcp-bridge", "bin", "chat-mcp-bridge.js");
    await bridgeLogin(bridge, appDir, configDir, server.mcpUrl);
    expect(listFiles(configDir).filter((file) => !file.endsWith(".lock")).length).toBeGreaterThan(0);
    expect(await toolsThroughBridge(bridge, appDir, configDir, server.mcpUrl)).toEqual(
      [...TOOL_NAMES].sort(),
    );
  });

  it("answers its first message with that login (in the keychain where one answers) without ES module machinery", async () => {
    // The keychain modules are CommonJS and load with require: an import() of them loaded Node's ES loader.
    const bridge = join(appDir, "node_modules", "chat-mcp-bridge", "bin", "chat-mcp-bridge.js");
    const { atAnswer } = await modulesAtFirstAnswer(bridge, appDir, configDir, server.mcpUrl);
    expect(await esMachineryBeyondCommonJs(atAnswer)).toEqual([]);
  });
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

function stringEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
