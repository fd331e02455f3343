/** Types of bench/lib/heap-snapshot.mjs for the test that checks it. */
export interface KindTotal {
  count: number;
  bytes: number;
}
export function heapByKind(file: string): Map<string, KindTotal>;
export function heapGrowth(
  before: Map<string, KindTotal>,
  after: Map<string, KindTotal>,
  top?: number,
): { label: string; count: number; bytes: number }[];
