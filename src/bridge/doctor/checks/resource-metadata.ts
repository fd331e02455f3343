/** The protected resource metadata check (RFC 9728): what the server says about itself and its authorization server. */

import { discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/client";
import { describeError } from "../../log.js";
import { type Check, checkedUrl } from "../check.js";
import { discoveryFetch, NEEDS_A_SIGN_IN_ENDPOINT } from "./discovery-needs.js";

export const resourceMetadataCheck: Check = {
  id: "resource-metadata",
  title: "Protected resource metadata",
  ...NEEDS_A_SIGN_IN_ENDPOINT,
  deadlineMs: () => 15_000,
  async run(context) {
    const resourceMetadataUrl = context.found.endpoint?.resourceMetadataUrl;
    try {
      const metadata = await discoverOAuthProtectedResourceMetadata(
        checkedUrl(context).href,
        resourceMetadataUrl ? { resourceMetadataUrl } : undefined,
        discoveryFetch(context),
      );
      const scopes = metadata.scopes_supported?.join(" ");
      return {
        status: "pass",
        detail:
          `resource ${metadata.resource}; authorization server ${metadata.authorization_servers?.[0] ?? "not named"}` +
          (scopes ? `; scopes ${scopes}` : ""),
      };
    } catch (error) {
      return {
        status: "pass",
        detail: `none published (${describeError(error)}); the server's origin is taken as the authorization server`,
      };
    }
  },
};
