/** The door to OAuthSession: one login to one protected resource, and the shapes it takes and tells. */
export { derivedCallbackPort } from "../login-key.js";
export { OAuthSession } from "./oauth-session.js";
export type {
  AuthChallenge,
  OAuthSessionOptions,
  SignInPrompt,
  SignInRequest,
  SignInSummary,
  StoredLoginSummary,
} from "./options.js";
