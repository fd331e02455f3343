/** What the web build has in place of node-extras.ts: nothing, so no Node built-in reaches a browser bundle. */

export const nodeExtras = undefined;
