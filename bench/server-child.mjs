/**
 * The reference server in its own process (so load generators and clients do not share its event loop); prints its
 * URLs as one JSON line. `--access-token-ttl=<s>` shortens the access tokens it issues (the soak);
 * `--mcp-era=legacy|modern|both` picks the protocol eras /mcp serves (a server without that option ignores it);
 * `--dpop=off|allowed|required` its DPoP mode (off by default here).
 */
import { startReferenceServer } from "../dist/server/index.js";

const flag = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1];
const accessTokenTtl = flag("access-token-ttl");
const mcpEra = flag("mcp-era");
const dpop = flag("dpop");

// Rate limiting off: the bench measures the server and the relay, not the limiter's 429s.
const server = await startReferenceServer({
  port: 0,
  host: "127.0.0.1",
  autoApprove: "acme",
  rateLimit: false,
  ...(accessTokenTtl ? { accessTokenTtlSeconds: Number(accessTokenTtl) } : {}),
  ...(mcpEra ? { mcpEra } : {}),
  // Off unless asked: the peers and the direct client present Bearer tokens (figure 10 compares on and off).
  dpop: dpop ?? "off",
});
process.stdout.write(
  `${JSON.stringify({ url: server.url, mcpUrl: server.mcpUrl, apiKeys: server.apiKeys })}\n`,
);

const stop = () => server.close().finally(() => process.exit(0));
process.stdin.on("end", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
