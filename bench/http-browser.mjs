#!/usr/bin/env node
/** A headless "browser" for the bench's sign-in: GETs the URL (its last argument) and follows redirects to the loopback callback. */
let url = new URL(process.argv.at(-1));
for (let hop = 0; hop < 20; hop++) {
  if (url.protocol !== "http:") {
    process.stderr.write(`bench http-browser: refusing to follow a ${url.protocol} URL\n`);
    process.exit(2);
  }
  const response = await fetch(url, { redirect: "manual" });
  const location = response.headers.get("location");
  await response.body?.cancel();
  if (response.status >= 300 && response.status < 400 && location) {
    url = new URL(location, url);
    continue;
  }
  process.exit(response.ok ? 0 : 1);
}
process.stderr.write("bench http-browser: too many redirects\n");
process.exit(1);
