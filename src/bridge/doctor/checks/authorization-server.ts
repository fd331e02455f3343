/** The authorization server check (RFC 8414): found as the bridge's sign-in finds it, and safe to use for this resource. */

import { describeError } from "../../log.js";
import { type Check, checkedUrl } from "../check.js";
import { discoveryFetch, NEEDS_A_SIGN_IN_ENDPOINT } from "./discovery-needs.js";

export const authorizationServerCheck: Check = {
  id: "authorization-server",
  title: "Authorization server",
  ...NEEDS_A_SIGN_IN_ENDPOINT,
  deadlineMs: () => 20_000,
  async run(context) {
    const { discoverServer } = await import("../../../auth/discovery.js");
    const { options } = context;
    try {
      const discovered = await discoverServer(checkedUrl(context).href, {
        resourceMetadataUrl: context.found.endpoint?.resourceMetadataUrl,
        resource: options.resource,
        fetchFn: discoveryFetch(context),
        allowHttp: options.allowHttp,
        log: () => {},
      });
      context.found.authorizationServer = discovered;
      const endpoints = discovered.metadata
        ? ["authorize", "token", discovered.metadata.registration_endpoint ? "registration" : undefined]
            .filter(Boolean)
            .join(", ")
        : "no metadata: /authorize, /token and /register at its root";
      // Without RFC 8707's resource the server may issue tokens any of its resources accept.
      const resource = options.disableResourceParameter
        ? `resource ${discovered.resource} not sent (--disable-resource-parameter): tokens are not audience-bound to this server`
        : `resource ${discovered.resource}`;
      return { status: "pass", detail: `${discovered.authorizationServerUrl} (${endpoints}); ${resource}` };
    } catch (error) {
      const refused = /does not cover/.test(describeError(error));
      return {
        status: "fail",
        detail: describeError(error),
        fix: refused
          ? "check the URL; if the server's protected resource really differs from it, pass --resource <that resource>"
          : "the server's OAuth metadata is missing or unsafe: tell its operator",
      };
    }
  },
};
