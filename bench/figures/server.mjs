/** Figure 6: requests per second on `GET /v2/chats/{id}` with autocannon, against a bare node:http server sending the same bytes. */
import autocannon from "autocannon";

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** Runs autocannon on `url` and returns the mean requests/s and latency, checking every answer was a 2xx. */
export async function loadTest({ url, headers, connections, seconds, warmupSeconds }) {
  if (warmupSeconds > 0) await run({ url, headers, connections, duration: warmupSeconds });
  const result = await run({ url, headers, connections, duration: seconds });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0)
    throw new Error(`${bad} of ${result.requests.total} requests to ${new URL(url).pathname} failed`);
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    latencyMs: { median: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 },
    connections,
    seconds,
  };
}
