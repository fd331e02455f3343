/** Streamable-HTTP MCP endpoint of the reference server (placeholder: mounted by createReferenceApp). */
import type { Express } from "express";
import type { ServerContext } from "../context.js";

export function mountMcp(_app: Express, _ctx: ServerContext): void {}
