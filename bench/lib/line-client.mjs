/** A minimal JSON-RPC client over a child's stdin/stdout lines: numbered ids, every answer matched, strays counted. */
import { onLines } from "./processes.mjs";

export class LineRpcClient {
  #child;
  #nextId = 1;
  /** id -> { resolve, reject } of requests still waiting. */
  #pending = new Map();
  /** Ids already answered: a second answer to one is counted in `answeredTwice` (and kept in `strays`). */
  #answered = new Set();
  /** Answers to a request that had its answer already: the wave's proof that nothing is answered twice. */
  answeredTwice = 0;
  /** Answers whose id was never sent or was already answered, and lines that are not JSON-RPC. */
  strays = [];
  /** Requests the server sent to us (none are expected for tools/call). */
  serverRequests = [];

  constructor(child) {
    this.#child = child;
    onLines(child.stdout, (line) => this.#receive(line));
    child.once("exit", (code, signal) => {
      for (const { reject } of this.#pending.values())
        reject(new Error(`the process exited (${code ?? signal})`));
      this.#pending.clear();
    });
  }

  get inFlight() {
    return this.#pending.size;
  }

  /** Sends one request and resolves with the whole response message (result or error). */
  request(method, params) {
    const [answer] = this.requestMany([{ method, params }]);
    return answer;
  }

  /** Writes every request in one chunk, so all of them are in flight at once; one promise per request. */
  requestMany(calls) {
    const lines = [];
    const answers = calls.map(({ method, params }) => {
      const id = this.#nextId++;
      lines.push(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    });
    this.#child.stdin.write(`${lines.join("\n")}\n`);
    return answers;
  }

  notify(method, params) {
    this.#child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method, ...(params ? { params } : {}) })}\n`);
  }

  #receive(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      this.strays.push(line.slice(0, 200));
      return;
    }
    if (message?.jsonrpc !== "2.0") {
      this.strays.push(line.slice(0, 200));
      return;
    }
    if ("method" in message) {
      if ("id" in message) {
        this.serverRequests.push(message.method);
        this.#child.stdin.write(
          `${JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not supported by the bench" } })}\n`,
        );
      }
      return;
    }
    const waiting = this.#pending.get(message.id);
    if (!waiting) {
      if (this.#answered.has(message.id)) this.answeredTwice++;
      this.strays.push(line.slice(0, 200));
      return;
    }
    this.#pending.delete(message.id);
    this.#answered.add(message.id);
    waiting.resolve(message);
  }
}
