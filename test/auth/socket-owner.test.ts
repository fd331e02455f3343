/** The callback's peer check (src/auth/socket-owner.ts) on socket tables as Linux and WSL2 print them, injected. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isOtherUsersSocket, runsUnderWsl } from "../../src/auth/socket-owner.js";
import { scratchDir } from "../support/scratch-dir.js";

const OWN_UID = 1000;
const CALLBACK_PORT = 53_682;
const BROWSER_PORT = 41_000;
/** The callback's view of a connection from 127.0.0.1:41000 to 127.0.0.1:53682. */
const connection = {
  localAddress: "127.0.0.1",
  localPort: CALLBACK_PORT,
  remoteAddress: "127.0.0.1",
  remotePort: BROWSER_PORT,
};

const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, "0");
/** One row of /proc/net/tcp on a little-endian machine (127.0.0.1 prints as 0100007F). */
const row = (sl: number, local: number, remote: number, state: string, uid: number) =>
  `  ${sl}: 0100007F:${hexPort(local)} 0100007F:${hexPort(remote)} ${state} 00000000:00000000 00:00000000 00000000  ${uid}        0 ${1000 + sl} 1 0000000000000000 20 4 30 10 -1`;

function tables(...rows: string[]): readonly string[] {
  const dir = scratchDir("cmb-sockets-");
  const header =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
  writeFileSync(join(dir, "tcp"), `${[header, ...rows].join("\n")}\n`);
  writeFileSync(join(dir, "tcp6"), `${header}\n`);
  return [join(dir, "tcp"), join(dir, "tcp6")];
}

const listener = row(0, CALLBACK_PORT, 0, "0A", OWN_UID);
const ourEnd = row(1, CALLBACK_PORT, BROWSER_PORT, "01", OWN_UID);

describe("plain Linux: only this user's sockets reach the callback", () => {
  it("accepts a browser of this user", () => {
    const machine = { tables: tables(listener, ourEnd, row(2, BROWSER_PORT, CALLBACK_PORT, "01", OWN_UID)) };
    expect(isOtherUsersSocket(connection, { ...machine, ownUid: OWN_UID, wsl: false })).toBe(false);
  });
  it("refuses another user's socket, a root one and one no row shows", () => {
    for (const peer of [
      [row(2, BROWSER_PORT, CALLBACK_PORT, "01", 1001)],
      [row(2, BROWSER_PORT, CALLBACK_PORT, "01", 0)],
      [],
    ])
      expect(
        isOtherUsersSocket(connection, {
          tables: tables(listener, ourEnd, ...peer),
          ownUid: OWN_UID,
          wsl: false,
        }),
      ).toBe(true);
  });
});

describe("WSL2 with a Windows browser", () => {
  it("NAT mode: WSL's localhost relay (root) connects on the browser's behalf, and is let through", () => {
    const relay = row(2, BROWSER_PORT, CALLBACK_PORT, "01", 0);
    expect(
      isOtherUsersSocket(connection, { tables: tables(listener, ourEnd, relay), ownUid: OWN_UID, wsl: true }),
    ).toBe(false);
  });
  it("mirrored mode (and WSL1): the browser's socket is Windows', no row shows it, and it is let through", () => {
    expect(
      isOtherUsersSocket(connection, { tables: tables(listener, ourEnd), ownUid: OWN_UID, wsl: true }),
    ).toBe(false);
  });
  it("another Linux user's socket is still refused", () => {
    const neighbour = row(2, BROWSER_PORT, CALLBACK_PORT, "01", 1001);
    expect(
      isOtherUsersSocket(connection, {
        tables: tables(listener, ourEnd, neighbour),
        ownUid: OWN_UID,
        wsl: true,
      }),
    ).toBe(true);
  });
});

describe("where there are no socket tables (macOS, Windows) nothing is refused by owner", () => {
  it("macOS: the tables cannot be read", () => {
    expect(isOtherUsersSocket(connection, { tables: ["/nonexistent/tcp"], ownUid: 501, wsl: false })).toBe(
      false,
    );
  });
  it("Windows: there is no uid", () => {
    expect(isOtherUsersSocket(connection, { tables: tables(), ownUid: undefined, wsl: false })).toBe(false);
  });
});

describe("WSL is told by the kernel's release string, which another user cannot change", () => {
  const release = (text: string) => {
    const path = join(scratchDir("cmb-osrelease-"), "osrelease");
    writeFileSync(path, text);
    return path;
  };
  it.each([
    ["5.15.167.4-microsoft-standard-WSL2", true],
    ["4.4.0-19041-Microsoft", true],
    ["6.8.0-49-generic", false],
  ])("%s -> %s", (text, expected) => {
    expect(runsUnderWsl(release(text))).toBe(expected);
  });
});
