/** Where src/bridge (oauth.ts, doctor) imports OAuthSession from today: the session/ folder's door under its old name, until those imports move. */
export * from "./session/index.js";
