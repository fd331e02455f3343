/** When the OAuth discovery checks run (the endpoint answered and asked for sign-in), and the fetch they use. */

import { proxyAwareFetch } from "../../../internal/proxy.js";
import type { Check, DoctorContext } from "../check.js";

export const NEEDS_A_SIGN_IN_ENDPOINT: Pick<Check, "needs" | "skipWhen"> = {
  needs: [{ id: "endpoint", whenFailed: "the endpoint check failed" }],
  skipWhen: (context: DoctorContext) =>
    context.found.needsAuth ? undefined : "the server answers without sign-in",
};

/** The fetch the OAuth session uses: through the proxy when one applies. */
export function discoveryFetch(context: DoctorContext): typeof fetch {
  return proxyAwareFetch({ env: context.env });
}
