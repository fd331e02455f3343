/** OAuth 2.1 authorization server of the reference server (placeholder: mounted by createReferenceApp). */
import type { Express } from "express";
import type { ServerContext } from "../context.js";

export function mountOAuth(_app: Express, _ctx: ServerContext): void {}
