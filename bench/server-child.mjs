/**
 * The reference server in its own process (so load generators and clients do not share its event loop); prints its
 * URLs as one JSON line. `--access-token-ttl=<s>` shortens the access tokens it issues (the soak).
 */
import { startReferenceServer } from "../dist/server/index.js";

const ttlFlag = process.argv.find((arg) => arg.startsWith("--access-token-ttl="));

// Rate limiting off: the bench measures the server and the relay, not the limiter's 429s.
const server = await startReferenceServer({
  port: 0,
  host: "127.0.0.1",
  autoApprove: "acme",
  rateLimit: false,
  ...(ttlFlag ? { accessTokenTtlSeconds: Number(ttlFlag.split("=")[1]) } : {}),
});
process.stdout.write(
  `${JSON.stringify({ url: server.url, mcpUrl: server.mcpUrl, apiKeys: server.apiKeys })}\n`,
);

const stop = () => server.close().finally(() => process.exit(0));
process.stdin.on("end", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
