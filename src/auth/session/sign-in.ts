/** Which sign-in runs, loaded with the first one: the device code when asked for, or when no browser can open here and the server offers it; else the browser's. */
import { deviceAuthorizationEndpoint } from "../checks.js";
import { BrowserNotOpenedError } from "../errors.js";
import { headlessReason, showDeviceCodeFallback } from "../sign-in-prompt.js";
import type { StoredLogin } from "../stored-login.js";
import type { BrowserSignInInput } from "./browser-sign-in.js";
import type { SessionContext } from "./context.js";

const loadBrowserSignIn = () => import("./browser-sign-in.js");
const loadDeviceSignIn = () => import("./device-sign-in.js");

/** Signs in under the lock the caller holds, and saves the login. */
export async function signIn(context: SessionContext, input: BrowserSignInInput): Promise<StoredLogin> {
  const { options } = context;
  const withDeviceCode = async () => (await loadDeviceSignIn()).signInWithDeviceCode(context, input);
  if (options.deviceCode) return withDeviceCode();
  // Known before any browser is tried: no loopback callback, no registration for a browser that cannot come.
  const headless = options.openBrowser !== false ? headlessReason(options.env ?? process.env) : undefined;
  if (
    headless &&
    deviceAuthorizationEndpoint((await context.metadata.get(input.resourceMetadataUrl)).metadata)
  ) {
    showDeviceCodeFallback(headless);
    return withDeviceCode();
  }
  try {
    return await (await loadBrowserSignIn()).signInWithBrowser(context, input);
  } catch (error) {
    if (error instanceof BrowserNotOpenedError) return withDeviceCode();
    throw error;
  }
}
