/** The client registration check: how this client will register (pre-registered, metadata document, or dynamic). */

import type { Check, CheckResult } from "../check.js";
import { assertionGrantResult } from "./assertion-grant.js";

export const registrationCheck: Check = {
  id: "registration",
  title: "Client registration",
  needs: [{ id: "authorization-server", whenFailed: "no authorization server" }],
  deadlineMs: () => 1000,
  async run({ options, found }): Promise<CheckResult> {
    const server = found.authorizationServer;
    if (!server) throw new Error("doctor: the registration check ran without an authorization server");
    if ((options.workloadTokenFile !== undefined || options.enterpriseIdp) && options.clientId) {
      const grantTypesSupported = server.metadata?.grant_types_supported;
      const idpIssuer = options.enterpriseIdp?.issuer;
      const { clientId, workloadTokenFile } = options;
      return assertionGrantResult({ clientId, workloadTokenFile, idpIssuer, grantTypesSupported });
    }
    if (options.clientCredentials && options.clientId) {
      const how = options.clientPrivateKeyFile
        ? "private_key_jwt with the key in --client-private-key"
        : "secret from $CHAT_MCP_CLIENT_SECRET";
      const metadata = server.metadata;
      const grants = metadata?.grant_types_supported;
      const methods = metadata?.token_endpoint_auth_methods_supported;
      if (grants && !grants.includes("client_credentials")) {
        return {
          status: "fail",
          detail: `the authorization server does not offer the client_credentials grant (it offers ${grants.join(", ")})`,
          fix: "sign in as a person instead: leave out --client-credentials",
        };
      }
      if (options.clientPrivateKeyFile && methods && !methods.includes("private_key_jwt")) {
        return {
          status: "fail",
          detail: `the authorization server does not take private_key_jwt (it takes ${methods.join(", ")})`,
          fix: "use the client's secret in $CHAT_MCP_CLIENT_SECRET instead of --client-private-key",
        };
      }
      return { status: "pass", detail: `client credentials as ${options.clientId}, ${how}; no browser` };
    }
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
