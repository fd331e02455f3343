/** Reads a V8 .heapsnapshot and totals self sizes by what the objects are (constructor, or the kind of string or buffer). */
import { readFileSync } from "node:fs";

/** `Map<label, { count, bytes }>` of every node in the snapshot; strings and code are grouped by their V8 type. */
export function heapByKind(file) {
  const snapshot = JSON.parse(readFileSync(file, "utf8"));
  const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const typeNames = types[0];
  const { nodes, strings } = snapshot;
  const totals = new Map();
  for (let index = 0; index < nodes.length; index += width) {
    const type = typeNames[nodes[index + typeAt]];
    const name = strings[nodes[index + nameAt]];
    const label = type === "object" || type === "native" || type === "closure" ? `${type} ${name}` : type;
    const entry = totals.get(label) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += nodes[index + sizeAt];
    totals.set(label, entry);
  }
  return totals;
}

/** The kinds that grew most from `before` to `after` (both from heapByKind), largest first. */
export function heapGrowth(before, after, top = 15) {
  const rows = [];
  for (const [label, entry] of after) {
    const base = before.get(label) ?? { count: 0, bytes: 0 };
    rows.push({ label, count: entry.count - base.count, bytes: entry.bytes - base.bytes });
  }
  return rows.sort((a, b) => b.bytes - a.bytes).slice(0, top);
}
