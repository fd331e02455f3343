/** Types of bench/lib/report.mjs for the test that checks its verdicts. */
export interface Target {
  op: "<=" | "<" | ">=";
  limit: number;
  on: "value" | "diff" | "ratio";
}
export interface Row {
  figure: string;
  metric: string;
  unit: string;
  value: number;
  baseline: number;
  baselineName: string;
  diff: number;
  ratio: number;
  target?: Target;
  status: "MET" | "MISSED" | "N/A" | "-";
  note?: string;
}
export function buildRows(figures: Record<string, unknown>): Row[];
export function formatTable(rows: Row[]): string;
