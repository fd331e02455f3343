/** `--client-private-key`: only a PEM key file the person alone can read, and the algorithm its type signs with. */
import { generateKeyPairSync } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readClientPrivateKey } from "../../src/auth/client-key.js";
import { scratchDir } from "../support/scratch-dir.js";

const pem = (pair: { privateKey: import("node:crypto").KeyObject }) =>
  pair.privateKey.export({ format: "pem", type: "pkcs8" }).toString();

function keyFile(text: string, mode = 0o600): string {
  const file = join(scratchDir("cmb-client-key-"), "key.pem");
  writeFileSync(file, text, { mode });
  chmodSync(file, mode);
  return file;
}

describe("readClientPrivateKey", () => {
  it.each([
    ["RS256", generateKeyPairSync("rsa", { modulusLength: 2048 })],
    ["ES256", generateKeyPairSync("ec", { namedCurve: "P-256" })],
    ["EdDSA", generateKeyPairSync("ed25519")],
  ] as const)("reads a key that signs with %s", (algorithm, pair) => {
    const key = readClientPrivateKey(keyFile(pem(pair)));
    expect(key.algorithm).toBe(algorithm);
    expect(key.jwk.d).toEqual(expect.any(String));
  });

  it.skipIf(process.platform === "win32")("refuses a file others may read, before reading it", () => {
    const text = pem(generateKeyPairSync("ec", { namedCurve: "P-256" }));
    for (const mode of [0o644, 0o640, 0o606]) {
      const file = keyFile(text, mode);
      expect(() => readClientPrivateKey(file)).toThrow(/other users may read or change it .*chmod 600/);
    }
  });

  it("refuses what is not a supported private key, without quoting it", () => {
    const publicPem = generateKeyPairSync("ec", { namedCurve: "P-256" })
      .publicKey.export({ format: "pem", type: "spki" })
      .toString();
    const p384 = pem(generateKeyPairSync("ec", { namedCurve: "P-384" }));
    for (const [text, why] of [
      ["not a key at all", /not a PEM private key/],
      [publicPem, /not a PEM private key/],
      [p384, /only RSA, P-256 \(EC\) and Ed25519/],
    ] as const) {
      let message = "";
      try {
        readClientPrivateKey(keyFile(text));
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(why);
      expect(message).not.toContain(text.split("\n")[1] ?? text);
    }
  });

  it("refuses a folder and a missing file", () => {
    const dir = join(scratchDir("cmb-client-key-"), "folder");
    mkdirSync(dir);
    expect(() => readClientPrivateKey(dir)).toThrow(/not a regular file/);
    expect(() => readClientPrivateKey(join(dir, "absent.pem"))).toThrow(/cannot open it \(ENOENT\)/);
  });
});
