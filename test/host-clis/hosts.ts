/**
 * The six coding CLIs, each configured as its own docs configure a stdio MCP server named `chat`, pointed at the
 * scripted model API, with telemetry, update checks and every other outside call off, a private HOME per run.
 * `runHost` runs one headless prompt and returns what the host printed.
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error: a plain .mjs script without types
import { HOSTS, hostBin } from "../../scripts/install-hosts.mjs";
import type { Wire } from "./model-api.js";

/** The stdio MCP server entry every host gets (the bridge, or mcp-remote for the notes). */
export interface StdioServer {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface HostSetup {
  home: string;
  modelUrl: string;
  server: StdioServer;
}

export interface HostCli {
  name: string;
  wire: Wire;
  /** Writes the host's config under `home`; returns the argv (after the binary) and env of a headless prompt. */
  configure(setup: HostSetup, prompt: string): { args: string[]; env: Record<string, string> };
}

type Installed = { name: string; version: string; bin: string };
const installed = (name: string): Installed =>
  (HOSTS as Installed[]).find((h) => h.name === name) as Installed;
export const binOf = (name: string): string => hostBin(installed(name));
export const versionOf = (name: string): string => installed(name).version;

const write = (path: string, text: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
};
const toml = (value: string) => JSON.stringify(value);

/** Gemini CLI and its fork Qwen Code share a settings.json shape. */
const geminiSettings = (server: StdioServer, auth: string) => ({
  mcpServers: { chat: { command: server.command, args: server.args, env: server.env, trust: true } },
  security: { auth: { selectedType: auth }, folderTrust: { enabled: false } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: {
    disableAutoUpdate: true,
    disableUpdateNag: true,
    enableAutoUpdate: false,
    enableAutoUpdateNotification: false,
  },
  ide: { enabled: false },
  model: { name: "scripted" },
});

export const HOST_CLIS: HostCli[] = [
  {
    name: "claude-code",
    wire: "anthropic",
    configure({ home, modelUrl, server }, prompt) {
      const config = join(home, "mcp.json");
      write(config, JSON.stringify({ mcpServers: { chat: { type: "stdio", ...server } } }));
      return {
        args: [
          "-p",
          prompt,
          "--mcp-config",
          config,
          "--strict-mcp-config",
          "--allowedTools",
          "mcp__chat",
          "--model",
          "sonnet",
        ],
        env: {
          ANTHROPIC_BASE_URL: modelUrl,
          ANTHROPIC_API_KEY: "sk-ant-scripted",
          DISABLE_TELEMETRY: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_ERROR_REPORTING: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          // MCP tools offered in the first request, not behind its ToolSearch tool.
          ENABLE_TOOL_SEARCH: "false",
        },
      };
    },
  },
  {
    name: "gemini-cli",
    wire: "gemini",
    configure({ home, modelUrl, server }, prompt) {
      write(join(home, ".gemini", "settings.json"), JSON.stringify(geminiSettings(server, "gemini-api-key")));
      return {
        args: ["-p", prompt, "--yolo", "-m", "gemini-2.5-flash"],
        env: {
          GEMINI_API_KEY: "scripted",
          GOOGLE_GEMINI_BASE_URL: modelUrl,
          GEMINI_CLI_NO_RELAUNCH: "true",
          GEMINI_TELEMETRY_ENABLED: "false",
        },
      };
    },
  },
  {
    name: "codex",
    wire: "responses",
    configure({ home, modelUrl, server }, prompt) {
      const env = Object.entries(server.env)
        .map(([key, value]) => `${key} = ${toml(value)}`)
        .join(", ");
      write(
        join(home, ".codex", "config.toml"),
        [
          'model = "gpt-5"',
          'model_provider = "scripted"',
          'approval_policy = "never"',
          'sandbox_mode = "danger-full-access"',
          "check_for_update_on_startup = false",
          "[analytics]",
          "enabled = false",
          "[feedback]",
          "enabled = false",
          "[model_providers.scripted]",
          'name = "scripted"',
          `base_url = ${toml(`${modelUrl}/v1`)}`,
          'wire_api = "responses"',
          'env_key = "SCRIPTED_API_KEY"',
          "request_max_retries = 0",
          "stream_max_retries = 0",
          "[mcp_servers.chat]",
          `command = ${toml(server.command)}`,
          `args = [${server.args.map(toml).join(", ")}]`,
          `env = { ${env} }`,
          // A server Codex waits for, as docs/hosts.md tells Codex users to set: an optional one gets 1 s to start
          // before a turn goes on without its tools (openai/codex#31641). CHAT_HOSTS_CODEX_OPTIONAL=1: the default.
          ...(process.env.CHAT_HOSTS_CODEX_OPTIONAL ? [] : ["required = true"]),
          "",
        ].join("\n"),
      );
      return {
        args: ["exec", "--skip-git-repo-check", prompt],
        env: {
          CODEX_HOME: join(home, ".codex"),
          SCRIPTED_API_KEY: "scripted",
          RUST_LOG: process.env.CHAT_HOSTS_DUMP ? "rmcp=debug,codex_core=info" : "",
        },
      };
    },
  },
  {
    name: "copilot",
    wire: "chat",
    configure({ home, modelUrl, server }, prompt) {
      write(
        join(home, ".copilot", "mcp-config.json"),
        JSON.stringify({ mcpServers: { chat: { type: "local", ...server, tools: ["*"] } } }),
      );
      return {
        args: [
          "-p",
          prompt,
          "--allow-all-tools",
          "--no-auto-update",
          "--disable-client-telemetry",
          "--disable-builtin-mcps",
        ],
        env: {
          COPILOT_PROVIDER_BASE_URL: `${modelUrl}/v1`,
          COPILOT_PROVIDER_TYPE: "openai",
          COPILOT_PROVIDER_API_KEY: "scripted",
          COPILOT_MODEL: "scripted",
          COPILOT_OFFLINE: "true",
          COPILOT_AUTO_UPDATE: "false",
        },
      };
    },
  },
  {
    name: "opencode",
    wire: "chat",
    configure({ home, modelUrl, server }, prompt) {
      write(
        join(home, ".config", "opencode", "opencode.json"),
        JSON.stringify({
          $schema: "https://opencode.ai/config.json",
          provider: {
            scripted: {
              npm: "@ai-sdk/openai-compatible",
              name: "Scripted",
              options: { baseURL: `${modelUrl}/v1`, apiKey: "scripted" },
              models: { scripted: { name: "Scripted", tool_call: true } },
            },
          },
          model: "scripted/scripted",
          small_model: "scripted/scripted",
          mcp: {
            chat: {
              type: "local",
              command: [server.command, ...server.args],
              environment: server.env,
              enabled: true,
            },
          },
          autoupdate: false,
          share: "disabled",
          permission: { "*": "allow" },
        }),
      );
      return {
        args: ["run", prompt],
        env: {
          OPENCODE_DISABLE_AUTOUPDATE: "1",
          OPENCODE_DISABLE_MODELS_FETCH: "1",
          OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
          OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
          OPENCODE_DISABLE_SHARE: "1",
          OPENCODE_DISABLE_CLAUDE_CODE: "1",
          XDG_CONFIG_HOME: join(home, ".config"),
          XDG_DATA_HOME: join(home, ".local", "share"),
          XDG_CACHE_HOME: join(home, ".cache"),
          XDG_STATE_HOME: join(home, ".local", "state"),
        },
      };
    },
  },
  {
    name: "qwen-code",
    wire: "chat",
    configure({ home, modelUrl, server }, prompt) {
      // Its MCP tools in the first request, not behind its tool_search/tool_call pair.
      const settings = { ...geminiSettings(server, "openai"), tools: { toolSearch: { enabled: false } } };
      write(join(home, ".qwen", "settings.json"), JSON.stringify(settings));
      return {
        args: ["-p", prompt, "--yolo"],
        env: {
          OPENAI_API_KEY: "scripted",
          OPENAI_BASE_URL: `${modelUrl}/v1`,
          OPENAI_MODEL: "scripted",
          QWEN_CODE_NO_RELAUNCH: "true",
        },
      };
    },
  },
];

export interface HostRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs one headless prompt in `home` (its HOME and working folder), ended after `timeoutMs`. */
export function runHost(
  host: HostCli,
  setup: HostSetup,
  prompt: string,
  timeoutMs: number,
): Promise<HostRun> {
  const { args, env } = host.configure(setup, prompt);
  const work = join(setup.home, "work");
  mkdirSync(work, { recursive: true });
  const started = Date.now();
  const child = spawn(binOf(host.name), args, {
    cwd: work,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: setup.home,
      TERM: "dumb",
      NO_COLOR: "1",
      CI: "1",
      LANG: "C.UTF-8",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    if (stdout.length < 1_000_000) stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    if (stderr.length < 1_000_000) stderr += chunk.toString("utf8");
  });
  const timer = setTimeout(() => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {}
  }, timeoutMs);
  return new Promise((done) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      if (process.env.CHAT_HOSTS_DUMP)
        appendFileSync(
          `${process.env.CHAT_HOSTS_DUMP}.out`,
          `== ${host.name} ${args.join(" ")}\n${stdout}\n-- stderr\n${stderr}\n`,
        );
      done({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}
