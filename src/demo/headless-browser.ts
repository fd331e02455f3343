/** The demo's headless "browser" ($BROWSER command): GETs the sign-in URL (its last argument) and follows redirects to the loopback callback. */

const MAX_REDIRECTS = 20;

/**
 * Follows `start` over HTTP, keeping cookies per origin as a browser does (the sign-in's start page binds the
 * callback to this browser with one); true when the last page answered 2xx. Only http(s) URLs are followed.
 */
async function followOverHttp(start: string): Promise<boolean> {
  const cookies = new Map<string, Map<string, string>>();
  let url = new URL(start);
  for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`refusing to follow a ${url.protocol} URL`);
    }
    const jar = cookies.get(url.origin) ?? new Map<string, string>();
    cookies.set(url.origin, jar);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";")[0] ?? "";
      const eq = pair.indexOf("=");
      if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    await response.body?.cancel();
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    return response.ok;
  }
  throw new Error("too many redirects");
}

const target = process.argv.at(-1);
if (!target || process.argv.length < 3) {
  process.stderr.write("usage: headless-browser <url>\n");
  process.exit(2);
}
followOverHttp(target).then(
  (ok) => process.exit(ok ? 0 : 1),
  (error: unknown) => {
    process.stderr.write(`demo browser: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
