/** What the web build has in place of node-extras.ts: nothing, so no Node built-in reaches a browser bundle. */
import type { NodeExtras } from "./runtime.js";

export const nodeExtras: NodeExtras | undefined = undefined;
