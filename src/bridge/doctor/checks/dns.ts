/** The DNS check: the server's host name (or the proxy's) resolves. */

import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { withinDeadline } from "../../../internal/deadline.js";
import { describeError } from "../../log.js";
import type { Check } from "../check.js";
import { NETWORK_DEADLINE_MS, NETWORK_TIMEOUT_MS, networkTarget } from "./network-target.js";

export const dnsCheck: Check = {
  id: "dns",
  title: "DNS",
  needs: [{ id: "proxy", whenFailed: "the proxy setting is not usable" }],
  deadlineMs: () => NETWORK_DEADLINE_MS,
  async run(context) {
    const { host } = networkTarget(context);
    if (isIP(host)) return { status: "pass", detail: `${host} is an IP address: no lookup needed` };
    const proxy = context.found.proxy;
    try {
      const addresses = await withinDeadline(
        lookup(host, { all: true }),
        NETWORK_TIMEOUT_MS,
        `the lookup took longer than ${NETWORK_TIMEOUT_MS / 1000} s`,
      );
      return {
        status: "pass",
        detail: `${host} → ${addresses.map((address) => address.address).join(", ")}`,
      };
    } catch (error) {
      return {
        status: "fail",
        detail: `${host} does not resolve (${describeError(error)})`,
        fix: proxy
          ? `check the host name in ${proxy.source} for typos`
          : "check the host name in the URL for typos; on a network that needs a proxy, set HTTPS_PROXY",
      };
    }
  },
};
