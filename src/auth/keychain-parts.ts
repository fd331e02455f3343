/** A login too long for one keychain entry (Windows Credential Manager: 2,560 bytes) kept across several entries. */
import { type KeychainBackend, withinKeychainDeadline } from "./keychain.js";

/**
 * The longest text one entry holds on each platform. Windows caps a credential's blob at 2,560 bytes, and
 * @napi-rs/keyring stores it as UTF-16 (two bytes a character; keytar's UTF-8 takes one for our ASCII JSON): 1,200
 * characters fit both with room to spare. The macOS keychain and the Secret Service take a whole login.
 */
export function keychainEntryChars(platform: NodeJS.Platform = process.platform): number {
  return platform === "win32" ? 1_200 : Number.POSITIVE_INFINITY;
}

/** What the first entry holds when the text is in parts: this marker and the count (never valid login JSON). */
const PARTS_MARKER = "chat-mcp-bridge parts:";
const MAX_PARTS = 64;
const partAccount = (account: string, index: number) => `${account} part ${index}`;

/**
 * Saves `text` under `account`, in one entry when it fits, else in numbered parts written before the entry that
 * counts them, so a reader never finds a count whose parts are missing. Parts a longer earlier save left are deleted.
 */
export async function setInParts(
  backend: KeychainBackend,
  account: string,
  text: string,
  limit: number,
): Promise<void> {
  const before = partCount(await withinKeychainDeadline(backend.get(account)));
  if (text.length <= limit) {
    await withinKeychainDeadline(backend.set(account, text));
    await deletePartsFrom(backend, account, 0, before);
    return;
  }
  const count = Math.ceil(text.length / limit);
  if (count > MAX_PARTS)
    throw new Error(`the login is too long for the keychain (${text.length} characters)`);
  for (let index = 0; index < count; index++)
    await withinKeychainDeadline(
      backend.set(partAccount(account, index), text.slice(index * limit, (index + 1) * limit)),
    );
  await withinKeychainDeadline(backend.set(account, `${PARTS_MARKER}${count}`));
  await deletePartsFrom(backend, account, count, before);
}

/** The text saved under `account` (one entry, or its parts joined), or null when there is none or a part is gone. */
export async function getInParts(backend: KeychainBackend, account: string): Promise<string | null> {
  const first = await withinKeychainDeadline(backend.get(account));
  const count = partCount(first);
  if (count === 0) return first;
  const parts: string[] = [];
  for (let index = 0; index < count; index++) {
    const part = await withinKeychainDeadline(backend.get(partAccount(account, index)));
    if (part === null) return null;
    parts.push(part);
  }
  return parts.join("");
}

/** Deletes the entry under `account` and any parts it counts. */
export async function deleteInParts(backend: KeychainBackend, account: string): Promise<void> {
  const count = partCount(await withinKeychainDeadline(backend.get(account)));
  await withinKeychainDeadline(backend.delete(account));
  await deletePartsFrom(backend, account, 0, count);
}

async function deletePartsFrom(
  backend: KeychainBackend,
  account: string,
  from: number,
  to: number,
): Promise<void> {
  for (let index = from; index < to; index++)
    await withinKeychainDeadline(backend.delete(partAccount(account, index)));
}

function partCount(text: string | null): number {
  if (!text?.startsWith(PARTS_MARKER)) return 0;
  const count = Number(text.slice(PARTS_MARKER.length));
  return Number.isInteger(count) && count > 0 && count <= MAX_PARTS ? count : 0;
}
