/** OAuth 2.1 authorization server of the reference server, as fetch handlers: metadata, registration, authorize + consent, token, revoke. */
export type {
  OAuthRateLimits,
  OAuthRegistrationLimits,
  OAuthServerOptions,
  PreRegisteredOAuthClient,
} from "../options.js";
export { DEFAULT_OAUTH_RATE_LIMITS } from "../rate-limit.js";
export { CONSENT_BINDING_COOKIE_PREFIX } from "./browser-binding.js";
export { DEFAULT_MAX_REGISTERED_CLIENTS, DEFAULT_UNUSED_REGISTRATION_TTL_SECONDS } from "./grants.js";
export { CHAT_SCOPES, OFFLINE_ACCESS_SCOPE } from "./provider.js";
export { MAX_REGISTRATION_BYTES } from "./registration.js";
export { createOAuthRoutes, type OAuthRoutes, protectedResourceMetadataUrl, resourceUrls } from "./routes.js";
