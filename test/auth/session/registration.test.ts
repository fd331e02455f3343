/** Reading an authorization server's refusal of a client (src/auth/session/registration.ts); which client a browser sign-in uses is in sign-in-client.test.ts (integration). */
import { describe, expect, it } from "vitest";
import type { SessionContext } from "../../../src/auth/session/context.js";
import { refusesClient } from "../../../src/auth/session/registration.js";

/** A 400 error page that says invalid_client first and then goes on for `totalBytes`, generated as it is read. */
function hugeErrorPage(totalBytes: number) {
  const seen = { sent: 0, cancelled: false };
  const chunk = new TextEncoder().encode(`${"x".repeat(1023)}\n`);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("error=invalid_client\n"));
    },
    pull(controller) {
      if (seen.sent >= totalBytes) return controller.close();
      seen.sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  const context = {
    fetchFn: async () => new Response(body, { status: 400, headers: { "content-type": "text/plain" } }),
    log: () => {},
  } as unknown as SessionContext;
  return { context, seen };
}

describe("refusesClient reading an error page", () => {
  it("finds invalid_client at the top of a 64 MiB page without reading the page", async () => {
    const { context, seen } = hugeErrorPage(64 * 1024 * 1024);
    expect(await refusesClient(context, new URL("https://as.example/authorize?client_id=c"))).toBe(true);
    expect(seen.cancelled).toBe(true);
    expect(seen.sent).toBeLessThan(1024 * 1024);
  });
});
