/** The client registration check: how this client will register (pre-registered, metadata document, or dynamic). */

import type { Check, CheckResult } from "../check.js";

export const registrationCheck: Check = {
  id: "registration",
  title: "Client registration",
  needs: [{ id: "authorization-server", whenFailed: "no authorization server" }],
  deadlineMs: () => 1000,
  async run({ options, found }): Promise<CheckResult> {
    const server = found.authorizationServer;
    if (!server) throw new Error("doctor: the registration check ran without an authorization server");
    if (options.clientId) {
      const secret = options.clientSecret
        ? "secret from $CHAT_MCP_CLIENT_SECRET"
        : "no secret (public client)";
      return { status: "pass", detail: `pre-registered client ${options.clientId}, ${secret}` };
    }
    const metadataDocuments = server.metadata?.client_id_metadata_document_supported === true;
    if (options.clientMetadataUrl && metadataDocuments) {
      return { status: "pass", detail: `client ID metadata document ${options.clientMetadataUrl}` };
    }
    const note = options.clientMetadataUrl ? " (the server does not take client ID metadata documents)" : "";
    if (!server.metadata || server.metadata.registration_endpoint) {
      return { status: "pass", detail: `dynamic registration (RFC 7591)${note}` };
    }
    return {
      status: "fail",
      detail: `the server offers no dynamic registration${note}`,
      fix:
        "pass --client-id with a client registered for redirect URI http://127.0.0.1:<--callback-port>/callback " +
        "(its secret in $CHAT_MCP_CLIENT_SECRET)" +
        (metadataDocuments ? ", or --client-metadata-url" : ""),
    };
  },
};
