/** ChatClient's Node-only part, imported lazily on Node: proxies from the environment and the `chat-cli login` credentials. */
import { storedAccessToken } from "../auth/rest-token.js";
import { proxyAwareFetch } from "../internal/proxy.js";

// Typed by its one reader, transport.ts's nodeExtras() (an import of its NodeExtras type here would be a cycle).
export const nodeExtras = {
  fetch: (proxy: string | false | undefined) => proxyAwareFetch({ proxy }),
  storedToken: (baseUrl: string) => storedAccessToken(baseUrl),
};
