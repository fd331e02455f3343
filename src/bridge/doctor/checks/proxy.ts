/** The proxy check: the same choice every request of the bridge makes (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; loopback direct). */

import { resolveProxy } from "../../../internal/proxy.js";
import { describeError } from "../../log.js";
import { asDetailAndFix, type Check, checkedUrl } from "../check.js";

export const proxyCheck: Check = {
  id: "proxy",
  title: "Proxy",
  needs: [{ id: "url", whenFailed: "the URL is not usable" }],
  deadlineMs: () => 1000,
  async run(context) {
    try {
      const decision = resolveProxy(checkedUrl(context), { env: context.env });
      context.found.proxy = decision.proxy;
      const proxy = decision.proxy;
      return {
        status: "pass",
        detail: proxy ? `via ${proxy.display} (from ${proxy.source})` : `none: direct (${decision.reason})`,
      };
    } catch (error) {
      return {
        status: "fail",
        ...asDetailAndFix(describeError(error), "fix the proxy variable, or unset it"),
      };
    }
  },
};
