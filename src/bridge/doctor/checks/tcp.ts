/** The TCP check: a connection to the server's port (or the proxy's) opens. */

import { connect as netConnect, type Socket } from "node:net";
import type { ProxyChoice } from "../../../internal/proxy.js";
import { describeError } from "../../log.js";
import type { Check } from "../check.js";
import { NETWORK_DEADLINE_MS, NETWORK_TIMEOUT_MS, networkTarget } from "./network-target.js";

export const tcpCheck: Check = {
  id: "tcp",
  title: "TCP connection",
  needs: [{ id: "dns", whenFailed: "DNS failed" }],
  deadlineMs: () => NETWORK_DEADLINE_MS,
  async run(context, signal) {
    const { host, port, what } = networkTarget(context);
    try {
      const socket = await connectTcp(host, port, signal);
      socket.destroy();
      return { status: "pass", detail: `connected to ${what}` };
    } catch (error) {
      return { status: "fail", ...tcpFailure(error, what, context.found.proxy) };
    }
  },
};

function connectTcp(host: string, port: number, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port, signal });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        Object.assign(new Error(`no answer within ${NETWORK_TIMEOUT_MS / 1000} s`), { code: "ETIMEDOUT" }),
      );
    }, NETWORK_TIMEOUT_MS);
    socket.once("connect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
  });
}

function tcpFailure(
  error: unknown,
  what: string,
  proxy: ProxyChoice | undefined,
): { detail: string; fix: string } {
  const code = (error as NodeJS.ErrnoException).code;
  const subject = proxy ? "the proxy" : "the server";
  switch (code) {
    case "ECONNREFUSED":
      return {
        detail: `nothing is listening at ${what} (connection refused)`,
        fix: proxy
          ? `check the host and port in ${proxy.source}, and that the proxy is running`
          : "start the server, or check the host and port in the URL",
      };
    case "ETIMEDOUT":
      return {
        detail: `${what} did not answer within ${NETWORK_TIMEOUT_MS / 1000} s`,
        fix: `a firewall may drop the connection to ${subject}; on a network that needs a proxy, set HTTPS_PROXY`,
      };
    default:
      return {
        detail: `cannot connect to ${what} (${describeError(error)})`,
        fix: `check the network path to ${subject}`,
      };
  }
}
