/** Types of the part of bench/lib/processes.mjs that its test calls. */
import type { Readable } from "node:stream";
export function onLines(stream: Readable, onLine: (line: string) => void): void;
