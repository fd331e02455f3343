/**
 * The SSE parser's cost per 2 KB event (issue 23, item 10; target <= 0.05 ms): the bridge's one parser
 * (eventsource-parser behind the 4 MiB event cap, from dist/), fed one event per chunk as servers send answers, and
 * 64 KiB chunks holding many events. `--baseline=<module>` measures another parser beside it, e.g. the hand-written
 * one it replaced (dist/bridge/upstream/http/sse.js of an older build, whose parser took a bare callback).
 * Run: npm run build && node bench/figures/sse-parser.mjs [--baseline=/path/to/old/dist/bridge/upstream/http/sse.js]
 */
import { pathToFileURL } from "node:url";
import { nowMs, summarize } from "../lib/stats.mjs";

const EVENT_BYTES = 2048;
const EVENTS_PER_ROUND = 20_000;
const ROUNDS = 7;

/** One `message` event of about `bytes` bytes: a JSON-RPC answer whose text is padded to size. */
export function eventOfSize(bytes, id) {
  const head = `event: message\nid: ${id}\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
  const tail = '"}]}}\n\n';
  return head + "é".repeat(Math.max(0, Math.floor((bytes - head.length - tail.length) / 2))) + tail;
}

/** Milliseconds per event for one round, events fed through the 4 MiB cap as the transports do. */
function round(makeParser, EventSizeCap, chunks, events) {
  let seen = 0;
  const parser = makeParser(() => {
    seen++;
  });
  const cap = new EventSizeCap(4 * 1024 * 1024, {
    feed: (bytes) => parser.push(bytes),
    discard: () => parser.discardEvent(),
    dropped: () => undefined,
  });
  const start = nowMs();
  for (const chunk of chunks) cap.push(chunk);
  const elapsed = nowMs() - start;
  if (seen !== events) throw new Error(`parsed ${seen} events of ${events}`);
  return elapsed / events;
}

/** The per-event cost of each parser, one event per chunk and 64 KiB chunks. */
export async function measureSseParser({ baseline } = {}) {
  const dist = new URL("../../dist/bridge/", import.meta.url);
  const { EventSizeCap } = await import(new URL("upstream/http/sse.js", dist).href);
  const current = await import(new URL("upstream/http/sse.js", dist).href);
  // The current parser takes handlers; the hand-written one it replaced took a bare callback.
  const parsers = { current: (onEvent) => new current.ServerSentEventParser({ onEvent }) };
  if (baseline) {
    const old = await import(pathToFileURL(baseline).href);
    parsers.baseline = (onEvent) => new old.ServerSentEventParser(onEvent);
  }
  const encoder = new TextEncoder();
  const perEvent = Array.from({ length: EVENTS_PER_ROUND }, (_, index) =>
    encoder.encode(eventOfSize(EVENT_BYTES, index + 1)),
  );
  const stream = Buffer.concat(perEvent);
  const largeChunks = [];
  for (let offset = 0; offset < stream.length; offset += 64 * 1024)
    largeChunks.push(stream.subarray(offset, offset + 64 * 1024));
  const results = {};
  for (const name of Object.keys(parsers)) results[name] = { eventPerChunk: [], chunks64KiB: [] };
  // Alternating, after a warm-up round each, so neither parser always runs on a colder JIT.
  for (let index = 0; index <= ROUNDS; index++) {
    for (const [name, makeParser] of Object.entries(parsers)) {
      const one = round(makeParser, EventSizeCap, perEvent, EVENTS_PER_ROUND);
      const large = round(makeParser, EventSizeCap, largeChunks, EVENTS_PER_ROUND);
      if (index === 0) continue;
      results[name].eventPerChunk.push(one);
      results[name].chunks64KiB.push(large);
    }
  }
  return {
    eventBytes: perEvent[0].length,
    events: EVENTS_PER_ROUND,
    rounds: ROUNDS,
    parsers: Object.fromEntries(
      Object.entries(results).map(([name, samples]) => [
        name,
        { eventPerChunk: summarize(samples.eventPerChunk), chunks64KiB: summarize(samples.chunks64KiB) },
      ]),
    ),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const baseline = process.argv.find((arg) => arg.startsWith("--baseline="))?.slice("--baseline=".length);
  const figure = await measureSseParser({ baseline });
  console.log(
    `SSE parser, ms per ${figure.eventBytes}-byte event (${figure.events} events x ${figure.rounds} rounds):`,
  );
  for (const [name, stats] of Object.entries(figure.parsers)) {
    const show = (s) => `median ${s.median.toFixed(5)} ms (min ${s.min.toFixed(5)}, max ${s.max.toFixed(5)})`;
    console.log(
      `  ${name}: one event per chunk ${show(stats.eventPerChunk)}; 64 KiB chunks ${show(stats.chunks64KiB)}`,
    );
  }
}
