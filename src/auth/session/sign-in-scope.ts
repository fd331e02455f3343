/** The scope a sign-in asks for, from the challenge and the login stored for the same authorization server. */
import { chooseScope, type DiscoveredServer } from "../discovery.js";
import { AuthRequiredError } from "../errors.js";
import type { StoredLogin } from "../stored-login.js";
import type { SessionContext } from "./context.js";
import type { SessionStorage } from "./session-storage.js";

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

/**
 * For a sign-in without a person (client credentials, an assertion): the login stored before and the scope to ask
 * for. The secret or assertion goes only where the same client's went before (SEP-2352): a server that now names
 * another authorization server could be steering it to one that collects them, so only `login` (`strictSave`) may
 * send it there.
 */
export async function unattendedLoginAndScope(
  context: SessionContext,
  server: DiscoveredServer,
  input: { challengeScope?: string | undefined; alreadyGranted?: string | undefined; strictSave: boolean },
  clientId: string,
  withheld: (loginCommand: string) => string,
): Promise<{ current: StoredLogin | undefined; scope: string | undefined }> {
  const current = await context.storage.reload();
  if (
    !input.strictSave &&
    current?.client?.client_id === clientId &&
    current.authorizationServerUrl !== server.authorizationServerUrl
  ) {
    throw new AuthRequiredError(
      `${context.serverUrl} now names the authorization server ${server.authorizationServerUrl} (it was ` +
        `${current.authorizationServerUrl}); ${withheld(context.options.loginCommand ?? "login")}`,
      "refused",
    );
  }
  const scope = chooseScope({
    challengeScope: input.challengeScope ?? (input.alreadyGranted ? undefined : current?.requestedScope),
    resourceMetadata: server.resourceMetadata,
    metadata: server.metadata,
    alreadyGranted: input.alreadyGranted,
  });
  return { current, scope };
}
