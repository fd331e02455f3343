/** A client metadata document is fetched from the address its host name was checked at (127.0.0.2), not from what the system resolves: the connection is the subject, so a real socket (integration). */
import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { ClientMetadataDocuments } from "../../../src/server/oauth/client-metadata-documents.js";
import { CALLBACK_URL } from "./helpers.js";

describe("the host is resolved once, every address checked, and the checked one connected to", () => {
  /** A lookup that answers `answers` for every name and counts its calls. */
  function stubLookup(answers: LookupAddress[]) {
    const calls: string[] = [];
    const lookup = async (host: string): Promise<LookupAddress[]> => {
      calls.push(host);
      return answers;
    };
    return { lookup, calls };
  }

  it("connects to the address it checked (127.0.0.2), not to what the system resolves for the name", async () => {
    const pinned = createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          client_id: `http://localhost:${port}${req.url}`,
          client_name: "Pinned",
          redirect_uris: [CALLBACK_URL],
        }),
      );
    });
    await new Promise<void>((resolve) => pinned.listen(0, "127.0.0.2", resolve));
    const address = pinned.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const { lookup, calls } = stubLookup([{ address: "127.0.0.2", family: 4 }]);
      const documentsResolver = new ClientMetadataDocuments({
        now: Date.now,
        allowLoopbackHttp: true,
        lookup,
      });
      const outcome = await documentsResolver.resolve(`http://localhost:${port}/apps/pinned.json`);
      expect(outcome).toMatchObject({ ok: true, client: { client_name: "Pinned" } });
      expect(calls).toEqual(["localhost"]);
    } finally {
      pinned.closeAllConnections();
      await new Promise((resolve) => pinned.close(resolve));
    }
  });
});
