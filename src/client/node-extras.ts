/** ChatClient's Node-only part, imported lazily on Node: proxies from the environment and the `chat-cli login` credentials. */
import { storedAccessToken } from "../auth/stored-access-token.js";
import { proxyAwareFetch } from "../internal/proxy.js";
import type { NodeExtras } from "./runtime.js";

export const nodeExtras: NodeExtras | undefined = {
  fetch: (proxy) => proxyAwareFetch({ proxy }),
  storedToken: (baseUrl) => storedAccessToken(baseUrl),
};
