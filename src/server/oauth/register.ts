/** `/register` (RFC 7591, deprecated by MCP 2026-07-28 but still offered): validated, trimmed, capped and bounded. */
import { jsonResponse, readBodyText } from "../http.js";
import type { OAuthParts } from "./parts.js";
import { rateLimited } from "./rate-limits.js";
import { MAX_REGISTRATION_BODY_BYTES, newRegisteredClient, parseClientMetadata } from "./registration.js";

export async function handleRegister(
  parts: OAuthParts,
  request: Request,
  clientIp: string,
): Promise<Response> {
  if (request.method !== "POST")
    return jsonResponse(405, { error: "invalid_request", error_description: "use POST" });
  const limited = rateLimited(parts.limiters.register, clientIp, "json");
  if (limited) return limited;
  const refuse = (error: string, description: string) =>
    jsonResponse(400, { error, error_description: description });
  let text: string | undefined;
  try {
    text = await readBodyText(request, MAX_REGISTRATION_BODY_BYTES);
  } catch {
    // RFC 7591 §3.2.2 answers every refusal with 400; the unread rest of the body ends the connection.
    return jsonResponse(
      400,
      {
        error: "invalid_client_metadata",
        error_description: `the registration is larger than ${MAX_REGISTRATION_BODY_BYTES} bytes`,
      },
      { connection: "close" },
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text ?? "");
  } catch {
    return refuse("invalid_client_metadata", "the body must be a JSON object of client metadata");
  }
  const parsed = parseClientMetadata(body);
  if (!parsed.ok) return refuse(parsed.problem.error, parsed.problem.error_description);
  if (!parts.grants.makeRoomForRegistration()) {
    return jsonResponse(
      503,
      {
        error: "temporarily_unavailable",
        error_description: "The server holds as many client registrations as it keeps; try again later.",
      },
      { "retry-after": "3600" },
    );
  }
  const client = parts.grants.registerClient(newRegisteredClient(parsed.metadata, parts.now()));
  return jsonResponse(201, client);
}
