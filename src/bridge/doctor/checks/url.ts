/** The URL and scheme check: the URL as the command line found it, and whether its scheme is safe to use. */

import { isLoopbackHost } from "../../../auth/checks.js";
import type { Check } from "../check.js";

export const urlCheck: Check = {
  id: "url",
  title: "URL and scheme",
  needs: [],
  deadlineMs: () => 1000,
  async run({ target, found }) {
    const url = target.url;
    if (!url) {
      return {
        status: "fail",
        detail: target.problem ?? "no URL",
        fix: "pass the MCP endpoint's full URL, e.g. https://example.com/mcp",
      };
    }
    found.url = url;
    const loopback = isLoopbackHost(url.hostname);
    return {
      status: "pass",
      detail:
        url.protocol === "https:"
          ? `${url.href} (https)`
          : `${url.href} (plain http${loopback ? " to this machine" : ", allowed by --allow-http: tokens travel unencrypted"})`,
    };
  },
};
