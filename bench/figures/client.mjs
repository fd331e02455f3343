/** Figure 5: `ChatClient.getChat` versus a raw `fetch` of the same URL with the same headers, alternating call by call. */
import { summarize, timeAlternating } from "../lib/stats.mjs";

export async function measureChatClient({ server, chatIds, calls, warmup }) {
  const { ChatClient } = await import("../../dist/index.js");
  const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme });
  const headers = {
    accept: "application/json",
    "user-agent": `chat-mcp-bridge node/${process.versions.node}`,
    authorization: `Bearer ${server.apiKeys.acme}`,
  };
  let index = 0;
  let wrong = 0;
  const viaClient = async () => {
    const chatId = chatIds[index++ % chatIds.length];
    const chat = await client.getChat(chatId);
    if (chat.id !== chatId) wrong++;
  };
  const viaFetch = async () => {
    const chatId = chatIds[index++ % chatIds.length];
    const response = await fetch(`${server.url}/v2/chats/${encodeURIComponent(chatId)}`, { headers });
    const chat = await response.json();
    if (!response.ok || chat.id !== chatId) wrong++;
  };
  const [clientSamples, fetchSamples] = await timeAlternating(viaClient, viaFetch, { calls, warmup });
  if (wrong > 0) throw new Error(`${wrong} getChat answers failed or named the wrong chat`);
  return { chatClientMs: summarize(clientSamples), rawFetchMs: summarize(fetchSamples) };
}
