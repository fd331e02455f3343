/** The reference server without a port, and `request(path, init)` on its fetch handler (hono's `app.request`). */
import { afterAll, beforeAll } from "vitest";
import { createInProcessReferenceServer, type InProcessReferenceServer } from "../../src/server/index.js";

export type InProcessOptions = Parameters<typeof createInProcessReferenceServer>[0];

/** An in-process reference server that also answers `request("/v2/chats", init)`: a path is taken from its `url`. */
export interface RequestableReferenceServer extends InProcessReferenceServer {
  request(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}

/** Creates the whole reference server in-process; nothing listens, so nothing needs a port. */
export function createRequestableReferenceServer(options: InProcessOptions = {}): RequestableReferenceServer {
  const server = createInProcessReferenceServer(options);
  return {
    ...server,
    request: (input, init) =>
      server.fetch(
        typeof input === "string" && input.startsWith("/") ? `${server.url}${input}` : input,
        init,
      ),
  };
}

/** An in-process reference server for the enclosing describe/file, closed afterwards. */
export function useRequestableReferenceServer(options: InProcessOptions = {}): {
  server: RequestableReferenceServer;
} {
  const holder = {} as { server: RequestableReferenceServer };
  beforeAll(() => {
    holder.server = createRequestableReferenceServer(options);
  });
  afterAll(async () => {
    await holder.server?.close();
  });
  return holder;
}
