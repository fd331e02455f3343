/** The data file's append-only journal: one line per persisted change, folded into the snapshot now and then. */
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import * as z from "zod";
import { MessageSchema } from "../wire/index.js";

/** One change as the journal records it; replaying the ops of a batch in order redoes the batch. */
export const JournalOpSchema = z.discriminatedUnion("t", [
  z.object({ t: z.literal("chat"), chat: z.record(z.string(), z.unknown()) }),
  z.object({ t: z.literal("message"), chatId: z.string(), message: MessageSchema }),
  z.object({ t: z.literal("apiKey"), apiKey: z.record(z.string(), z.unknown()) }),
  z.object({ t: z.literal("sso"), subject: z.string() }),
  z.object({ t: z.literal("set"), collection: z.string(), key: z.string(), value: z.unknown() }),
  z.object({ t: z.literal("delete"), collection: z.string(), key: z.string() }),
]);
export type JournalOp = z.infer<typeof JournalOpSchema>;

/** One line of the journal: the store-wide sequence after the batch, and its ops. */
const JournalBatchSchema = z.object({ seq: z.number().int(), ops: z.array(JournalOpSchema) });
export type JournalBatch = z.infer<typeof JournalBatchSchema>;

/** The first line: the snapshot this journal continues (a journal left by an older snapshot is ignored). */
const JournalHeaderSchema = z.object({ snapshot: z.string() });

export const journalFileOf = (dataFile: string): string => `${dataFile}.journal`;

/**
 * The batches recorded after the snapshot `snapshotId`; a torn last line (a crash mid-append) is dropped, any
 * other damage throws. A journal of another snapshot (left by a crash during folding) yields nothing.
 */
export function readJournal(dataFile: string, snapshotId: string | undefined): JournalBatch[] {
  let text: string;
  try {
    text = readFileSync(journalFileOf(dataFile), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  // The last piece is empty after a final newline, or a torn line: dropped either way.
  const complete = text.split("\n").slice(0, -1);
  const [headerLine, ...batchLines] = complete;
  if (headerLine === undefined) return [];
  const header = JournalHeaderSchema.safeParse(parseJson(headerLine));
  if (!header.success || header.data.snapshot !== snapshotId) return [];
  return batchLines.map((line, index) => {
    const batch = JournalBatchSchema.safeParse(parseJson(line));
    if (!batch.success) throw new Error(`journal line ${index + 2} is damaged: ${batch.error.message}`);
    return batch.data;
  });
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * Appends one batch (preceded by the header when the journal is new) and fsyncs. Returns the journal's new
 * length, or null when the journal on disk is not the one expected (`expectedBytes` differs: deleted, replaced),
 * so the caller writes a whole snapshot instead. A failed append is cut back off, leaving the journal as it was.
 */
export function appendJournal(
  dataFile: string,
  snapshotId: string,
  expectedBytes: number,
  batch: JournalBatch,
): number | null {
  const fd = openSync(journalFileOf(dataFile), "a", 0o600);
  try {
    const size = fstatSync(fd).size;
    if (size !== expectedBytes) return null;
    const header = size === 0 ? `${JSON.stringify({ snapshot: snapshotId })}\n` : "";
    const bytes = Buffer.from(`${header}${JSON.stringify(batch)}\n`, "utf8");
    try {
      let written = 0;
      while (written < bytes.length) {
        const count = writeSync(fd, bytes, written, bytes.length - written);
        if (count <= 0) throw new Error("short write to the journal");
        written += count;
      }
      fsyncSync(fd);
    } catch (error) {
      try {
        ftruncateSync(fd, size);
      } catch {
        // The torn line is dropped on the next load anyway.
      }
      throw error;
    }
    return size + bytes.length;
  } finally {
    closeSync(fd);
  }
}

export function removeJournal(dataFile: string): void {
  rmSync(journalFileOf(dataFile), { force: true });
}
