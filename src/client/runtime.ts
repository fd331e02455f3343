/** What ChatClient takes from the runtime it runs on: the environment where one is readable, and Node's extras on Node only. */
export { envVar } from "../internal/env.js";

/** The `fetch` the client calls (through ky, with a `Request`); pass your own (a test double, an app's) as `fetch`. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Header values to add; `null` removes a default header (e.g. `{ "user-agent": null }`), undefined is skipped. */
export type HeadersOption = Record<string, string | null | undefined>;

/** Node's part of the client: the proxy-aware fetch and the `chat-cli login` credentials, loaded on first use. */
export interface NodeExtras {
  /** fetch through the proxy the option or `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` choose (nothing loads without one). */
  fetch(proxy: string | false | undefined): FetchLike;
  /** The access token `chat-cli login` saved for this base URL (refreshed when due), if any. */
  storedToken(baseUrl: string): Promise<string | undefined>;
}

/** True on Node itself: Bun and Deno also define `process.versions.node`, and their own fetch reads the proxy variables. */
export function onNode(): boolean {
  const runtime = globalThis as { process?: { release?: { name?: string } }; Bun?: unknown; Deno?: unknown };
  return runtime.process?.release?.name === "node" && runtime.Bun === undefined && runtime.Deno === undefined;
}

/** The version the bundles are built with (scripts/bundle.mjs); run from source, "dev". */
declare const CHAT_MCP_BRIDGE_VERSION: string | undefined;
export const SDK_VERSION = typeof CHAT_MCP_BRIDGE_VERSION === "string" ? CHAT_MCP_BRIDGE_VERSION : "dev";

let extras: Promise<NodeExtras | undefined> | undefined;

/**
 * Node's extras, imported on first use and on Node only. The web build (scripts/bundle.mjs) replaces the module with
 * one that has none, so a browser bundler never meets a Node built-in.
 */
export function nodeExtras(): Promise<NodeExtras | undefined> {
  extras ??= onNode()
    ? import("./node-extras.js").then((module) => module.nodeExtras)
    : Promise.resolve(undefined);
  return extras;
}
