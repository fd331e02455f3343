/** The demo's headless "browser" ($BROWSER command): GETs the sign-in URL (its last argument) and follows redirects to the loopback callback. */

const MAX_REDIRECTS = 20;

/** Follows `start` over HTTP; true when the last page answered 2xx. Only http(s) URLs are followed. */
async function followOverHttp(start: string): Promise<boolean> {
  let url = new URL(start);
  for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`refusing to follow a ${url.protocol} URL`);
    }
    const response = await fetch(url, { redirect: "manual" });
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
