/** What the OAuth endpoints share: grants, flows, clients, limits, the consent binding and the server's identity. */
import type { ServerContext } from "../context.js";
import type { ConsentBrowserBinding } from "./browser-binding.js";
import type { ClientMetadataDocuments } from "./client-metadata-documents.js";
import type { DeviceAuthorizations } from "./device-authorizations.js";
import type { DpopPolicy } from "./dpop.js";
import type { OAuthGrants } from "./grants.js";
import type { ClientAssertions, JwtBearerGrant } from "./jwt.js";
import type { AuthorizationFlows } from "./provider.js";
import type { OAuthLimiters } from "./rate-limits.js";
import type { RegisteredClient } from "./registration.js";

export interface OAuthParts {
  ctx: ServerContext;
  /** Exactly the base URL, from which the metadata URL is built (RFC 8414 §3.3). */
  issuer: string;
  grants: OAuthGrants;
  flows: AuthorizationFlows;
  /** Pending device authorizations (RFC 8628). */
  devices: DeviceAuthorizations;
  /** False when the server was started without the device grant (`deviceAuthorization: false`). */
  offersDeviceGrant: boolean;
  documents: ClientMetadataDocuments;
  limiters: OAuthLimiters;
  binding: ConsentBrowserBinding;
  /** `private_key_jwt` assertions checked, and their `jti`s remembered against replay. */
  assertions: ClientAssertions;
  /** The jwt-bearer grant: workload identity tokens and ID-JAGs from trusted issuers. */
  jwtBearer: JwtBearerGrant;
  /** DPoP proofs at the token endpoint and the binding of the tokens issued there. */
  dpop: DpopPolicy;
  now: () => number;
  /** When set, requests are approved for this account at once (no consent page). */
  autoApprove?: { account: string; userId?: string };
}

/**
 * A client and whether the server can vouch for its redirect URIs (RFC 9700 §4.11.2): pre-registered clients
 * yes; dynamically registered ones and metadata-document clients no (anyone can name any URI there).
 */
export type ClientLookup =
  | { ok: true; client: RegisteredClient; vouched: boolean }
  | { ok: false; reason: string };

export async function findClient(parts: OAuthParts, clientId: string): Promise<ClientLookup> {
  const known = parts.grants.getClient(clientId);
  if (known) return { ok: true, client: known, vouched: !parts.grants.isDynamicallyRegistered(clientId) };
  if (parts.documents.isDocumentUrl(clientId)) {
    const outcome = await parts.documents.resolve(clientId);
    return outcome.ok
      ? { ok: true, client: outcome.client, vouched: false }
      : { ok: false, reason: outcome.reason };
  }
  return { ok: false, reason: "unknown client_id" };
}
