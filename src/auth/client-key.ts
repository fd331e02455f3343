/** `--client-private-key <pem-file>`: the key a `private_key_jwt` client signs its assertions with, read only from a file the person alone can read. */
import { createPrivateKey } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { rememberSecret } from "../internal/redact.js";
import { UsageError } from "../internal/usage-error.js";

/** A private key as the SDK's `PrivateKeyJwtProvider` takes it (a JWK, so Ed25519 works too), and its algorithm. */
export interface ClientPrivateKey {
  jwk: Record<string, unknown>;
  /** RS256 for RSA, ES256 for P-256, EdDSA for Ed25519. */
  algorithm: "RS256" | "ES256" | "EdDSA";
}

/** A PEM private key is a few KiB at most (RSA-4096 is about 3.3 KiB). */
const MAX_KEY_BYTES = 64 * 1024;

/**
 * Reads the key file: a regular file owned by this user that no one else may read or write (refused otherwise,
 * before a byte of it is read), holding one RSA, P-256 or Ed25519 private key in PEM. Errors name the file,
 * never its contents.
 */
export function readClientPrivateKey(path: string): ClientPrivateKey {
  const refuse = (why: string) => new UsageError(`--client-private-key ${path}: ${why}`);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw refuse(`cannot open it (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  let text: string;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse("not a regular file");
    if (process.platform !== "win32") {
      if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
        throw refuse("the file belongs to another user; a private key must be your own");
      }
      if ((stat.mode & 0o077) !== 0) {
        throw refuse(
          `other users may read or change it (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 on it`,
        );
      }
    }
    if (stat.size > MAX_KEY_BYTES) throw refuse("too large for a PEM private key");
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    text = buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
  rememberSecret(text);
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey({ key: text, format: "pem" });
  } catch {
    throw refuse("not a PEM private key (an unencrypted PKCS#8, PKCS#1 or SEC1 key is needed)");
  }
  const algorithm =
    key.asymmetricKeyType === "rsa"
      ? "RS256"
      : key.asymmetricKeyType === "ed25519"
        ? "EdDSA"
        : key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1"
          ? "ES256"
          : undefined;
  if (!algorithm) throw refuse("only RSA, P-256 (EC) and Ed25519 keys are supported");
  const jwk = key.export({ format: "jwk" }) as Record<string, unknown>;
  for (const part of ["d", "p", "q", "dp", "dq", "qi"]) rememberSecret(jwk[part] as string | undefined);
  return { jwk, algorithm };
}
