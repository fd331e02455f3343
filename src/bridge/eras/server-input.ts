/** What a server may put before the person through the bridge: URL-mode elicitations checked and their site named, and no input key of the bridge's own. */
import { checkShownUrl } from "../../auth/index.js";
import { oneLineText } from "../../internal/redact.js";
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";

/** The prefix of the bridge's own input keys (`chat-mcp-bridge/sign-in`, `chat-mcp-bridge/confirm`): never a server's. */
export const BRIDGE_INPUT_PREFIX = "chat-mcp-bridge/";

/** The most of a server's message a URL-mode elicitation shows. */
const MAX_SERVER_MESSAGE_CHARS = 300;

/** Why the bridge will not pass a server's request for input to the host. */
export class RefusedServerInput extends Error {
  override readonly name = "RefusedServerInput";
}

/**
 * A server's `elicitation/create` params as the host may see them: a URL-mode `url` through `checkShownUrl`, its
 * `message` the bridge's words naming the site, then the server's text as one bounded, quoted line, so it cannot
 * pass for the bridge's sign-in. Other modes pass as they are. Throws RefusedServerInput.
 */
export function checkedElicitation(params: Json): Json {
  if (params.mode !== "url") return params;
  if (typeof params.url !== "string") throw new RefusedServerInput("its URL-mode elicitation has no url");
  let shown: ReturnType<typeof checkShownUrl>;
  try {
    shown = checkShownUrl(params.url, "URL of the server's URL-mode elicitation");
  } catch (error) {
    throw new RefusedServerInput((error as Error).message);
  }
  const text =
    typeof params.message === "string" ? oneLineText(params.message, MAX_SERVER_MESSAGE_CHARS) : "";
  const own = `The server sent a link to ${shown.site}.`;
  return { ...params, url: shown.href, message: text ? `${own} Its message: ${JSON.stringify(text)}` : own };
}

/**
 * A server's `input_required` result as the host may see it: no input key of the bridge's own prefix (it could stage
 * the bridge's sign-in word for word), URL-mode elicitations checked. Throws RefusedServerInput.
 */
export function checkedInputRequired(result: Json): Json {
  if (result.resultType !== "input_required" || !isObject(result.inputRequests)) return result;
  let changed = false;
  const inputRequests: Json = {};
  for (const [key, request] of Object.entries(result.inputRequests)) {
    if (key.startsWith(BRIDGE_INPUT_PREFIX)) {
      throw new RefusedServerInput(`it used the input key ${JSON.stringify(key)}, which is the bridge's own`);
    }
    inputRequests[key] = request;
    if (!isObject(request) || request.method !== "elicitation/create" || !isObject(request.params)) continue;
    const params = checkedElicitation(request.params);
    if (params !== request.params) {
      inputRequests[key] = { ...request, params };
      changed = true;
    }
  }
  return changed ? { ...result, inputRequests } : result;
}
