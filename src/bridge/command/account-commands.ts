/** `chat-mcp-bridge login`, `logout` and `doctor`: the commands besides the relay, each returning its exit code. */
import { configDir } from "../../config/index.js";
import { describeError } from "../log/log.js";
import type { BridgeOptions, DoctorCommandOptions, DoctorTarget } from "../options/bridge-options.js";
import { openBridgeLog, recordingFatal } from "../relay/run.js";
import { createBridgeAuth, restApiUrlRefusal } from "../sign-in/oauth.js";
import { probeEndpoint, wrongEndpointMessage } from "../upstream/http/endpoint-check.js";
import { eraVerdictStore } from "../upstream/probe.js";

/** `chat-mcp-bridge login|logout`: one line of result on stderr; returns the exit code. */
export async function runAccountCommand(
  kind: "login" | "logout",
  options: BridgeOptions,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const log = await openBridgeLog(options, env);
  const profile = options.profile ? ` (profile ${options.profile})` : "";
  return recordingFatal(log, async () => {
    const session = await createBridgeAuth(options, log);
    if (kind === "login") {
      // A URL that is not the MCP endpoint would take the user through the browser for nothing.
      const restApi = await restApiUrlRefusal(options.url);
      if (restApi) throw new Error(restApi);
      const probe = await probeEndpoint(options.url);
      if (probe.unreachable)
        throw new Error(
          `cannot reach ${options.url.origin}: ${probe.unreachable}. Is the server running, and is ${options.url.href} the right URL?`,
        );
      if (probe.status === 404)
        throw new Error(await wrongEndpointMessage(options.url, "it answers HTTP 404"));
      try {
        await session.signIn();
      } catch (error) {
        if (!/\binvalid_target\b/.test(describeError(error))) throw error;
        throw new Error(
          await wrongEndpointMessage(
            options.url,
            "the authorization server refused it as a resource: invalid_target",
          ),
        );
      }
      log.info(`signed in to ${options.url.origin}${profile}`);
    } else {
      // The remembered era goes with the login: the next start probes again (the server may have moved on).
      await eraVerdictStore(options, env).forget();
      if (!(await session.signOut())) {
        // Which logins there are: the URL may differ by a typo or a trailing slash.
        const stored = await (await import("../../auth/index.js")).storedLoginUrls(configDir(env));
        const listed =
          stored.length > 0 ? `stored logins: ${stored.join(", ")}` : "there are no stored logins";
        const mustMatch = "the MCP URL, --header names and --profile must match the sign-in";
        log.info(`no stored login for ${options.url.href}, so nothing was removed (${mustMatch}); ${listed}`);
        return 1;
      }
      log.info(
        `signed out of ${options.url.href}${profile}; its stored login (tokens and client registration) was removed`,
      );
    }
    return 0;
  });
}

/** `chat-mcp-bridge doctor`: its checks load only now; returns the exit code. */
export async function runDoctorCommand(target: DoctorTarget, options: DoctorCommandOptions): Promise<number> {
  const { runDoctor } = await import("../doctor/index.js");
  const restApi = target.url ? await restApiUrlRefusal(target.url) : undefined;
  // The REST API's own Bearer challenge would pass the endpoint check: it fails as the URL check instead.
  if (restApi) target = { raw: target.raw, problem: restApi };
  return runDoctor(target, options);
}
