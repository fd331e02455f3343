/** OAuth 2.1 authorization server of the reference server, as fetch handlers: metadata, registration, authorize + consent, device authorization, token, revoke. */
export type {
  DeviceAuthorizationOptions,
  OAuthRateLimits,
  OAuthRegistrationLimits,
  OAuthServerOptions,
  PreRegisteredOAuthClient,
} from "../options.js";
export { DEFAULT_OAUTH_RATE_LIMITS } from "../rate-limit.js";
export {
  DEFAULT_DEVICE_CODE_LIFETIME_SECONDS,
  DEFAULT_DEVICE_POLL_INTERVAL_SECONDS,
  DEFAULT_MAX_PENDING_DEVICE_AUTHORIZATIONS,
} from "./device.js";
export { DEFAULT_MAX_REGISTERED_CLIENTS, DEFAULT_UNUSED_REGISTRATION_TTL_SECONDS } from "./grants.js";
export { CHAT_SCOPES, OFFLINE_ACCESS_SCOPE } from "./provider.js";
export { MAX_REGISTRATION_BYTES } from "./registration.js";
export { createOAuthRoutes, type OAuthRoutes, protectedResourceMetadataUrl, resourceUrls } from "./routes.js";
