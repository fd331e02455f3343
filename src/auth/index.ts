/** The OAuth client side shared by chat-cli and the bridge: sessions, browser opening, stored-login lookups. */
export { parseBearerChallenge } from "./checks.js";
export { type ClientPrivateKey, readClientPrivateKey } from "./client-key.js";
export { AuthRequiredError, TokenStoreError, UnsafeUrlError } from "./errors.js";
export { canonicalServerUrl, hasStoredLogin, loginKey, restServerUrl, storedLoginUrls } from "./login-key.js";
export type { AuthLog, TokenStoreMode } from "./login-store.js";
export { assertBrowsableUrl, openUrl, splitCommandWords } from "./open-url.js";
export { storedAccessToken } from "./rest-token.js";
export {
  type AuthChallenge,
  derivedCallbackPort,
  OAuthSession,
  type OAuthSessionOptions,
  type SignInPrompt,
  type SignInRequest,
  type SignInSummary,
} from "./session/index.js";
export { checkShownUrl, type ShownUrl } from "./shown-url.js";
