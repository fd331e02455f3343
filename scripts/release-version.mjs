// After `changeset version` has bumped package.json: the same version in server.json (the MCP Registry's entry and
// its npm package) and in package-lock.json's root, so the "Version Packages" pull request changes all three at once.
import { readFileSync, writeFileSync } from "node:fs";

const { name, version } = JSON.parse(readFileSync("package.json", "utf8"));

/** Rewrites a JSON file in place, keeping two-space indentation and the final newline. */
function update(path, change) {
  const json = JSON.parse(readFileSync(path, "utf8"));
  change(json);
  writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`);
}

update("server.json", (server) => {
  server.version = version;
  for (const entry of server.packages ?? [])
    if (entry.registryType === "npm" && entry.identifier === name) entry.version = version;
});
update("package-lock.json", (lock) => {
  lock.version = version;
  if (lock.packages?.[""]) lock.packages[""].version = version;
});
process.stdout.write(`server.json and package-lock.json: ${name}@${version}\n`);
