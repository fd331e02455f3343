/** The scope a sign-in asks for, from the challenge and the login stored for the same authorization server. */
import { chooseScope, type DiscoveredServer } from "../discovery.js";
import type { StoredLogin } from "../stored-login.js";
import type { SessionStorage } from "./login-storage.js";

/**
 * The login stored before a sign-in (reloaded), whether it is the same authorization server's, and the scope to ask
 * for: the challenge's, else what the same server's login asked for (unless stepping up), as chooseScope says.
 */
export async function loginAndScope(
  storage: SessionStorage,
  server: DiscoveredServer,
  input: { challengeScope?: string | undefined; alreadyGranted?: string | undefined },
): Promise<{ current: StoredLogin | undefined; sameServer: boolean; scope: string | undefined }> {
  const current = await storage.reload();
  const sameServer = current?.authorizationServerUrl === server.authorizationServerUrl;
  const scope = chooseScope({
    challengeScope:
      input.challengeScope ?? (sameServer && !input.alreadyGranted ? current?.requestedScope : undefined),
    resourceMetadata: server.resourceMetadata,
    metadata: server.metadata,
    alreadyGranted: input.alreadyGranted,
  });
  return { current, sameServer, scope };
}
