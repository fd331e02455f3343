/** `get_preview` as an MCP App (`io.modelcontextprotocol/ui`): the `ui://` resource a host renders inline, with its CSP. */
import { RESOURCE_MIME_TYPE, registerAppResource } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/server";

export const PREVIEW_APP_URI = "ui://chat-reference-server/preview.html";

/**
 * The App: it shows the preview URL of the `get_preview` result the host hands it (`ui/notifications/tool-result`)
 * in a frame. That page is the chat's own preview, shown only to a person signed in as a member of the chat's
 * account or team, so the App sees no more than the URL does. No script or style is loaded from anywhere.
 */
const PREVIEW_APP_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chat preview</title>
<style>body{margin:0;font:14px system-ui,sans-serif}p{margin:8px}iframe{border:0;width:100%;height:480px}</style>
</head><body><p id="status">Waiting for the preview...</p><iframe id="frame" title="Chat preview" hidden></iframe>
<script>
(() => {
  let nextId = 1;
  const post = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const show = (result) => {
    const url = result && result.structuredContent && result.structuredContent.url;
    const status = document.getElementById("status");
    if (typeof url !== "string" || !/^https?:\\/\\//.test(url)) { status.textContent = "No preview for this chat."; return; }
    const frame = document.getElementById("frame");
    frame.src = url;
    frame.hidden = false;
    status.textContent = "Preview of chat " + String(result.structuredContent.chatId ?? "");
  };
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === "ui/notifications/tool-result") show(message.params);
    if (message.id === 1 && message.result) post({ method: "ui/notifications/initialized", params: {} });
  });
  post({ id: nextId++, method: "ui/initialize", params: {
    protocolVersion: "2026-01-26", appInfo: { name: "chat-preview", version: "1" }, appCapabilities: {} } });
})();
</script></body></html>
`;

/** Registers the App's resource on one server; its CSP lets it frame only this server's own pages. */
export function registerPreviewApp(server: McpServer, baseUrl: string): void {
  const origin = new URL(baseUrl).origin;
  const ui = {
    csp: { frameDomains: [origin], connectDomains: [], resourceDomains: [] },
    prefersBorder: true,
  };
  registerAppResource(
    server,
    "Chat preview",
    PREVIEW_APP_URI,
    { description: "Shows a chat's preview inline (the get_preview tool's App).", _meta: { ui } },
    async () => ({
      contents: [
        { uri: PREVIEW_APP_URI, mimeType: RESOURCE_MIME_TYPE, text: PREVIEW_APP_HTML, _meta: { ui } },
      ],
    }),
  );
}
