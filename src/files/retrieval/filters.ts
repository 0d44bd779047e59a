/**
 * `filters` on a file's `attributes` (OpenAI's comparison and compound filters) as a LanceDB
 * SQL where-clause, so the index applies them while it searches, never after. Each attribute
 * is a column per value type (`attributeColumn`): a key holding a string in one file and a
 * number in another compares each as its own type. A key no file of the store has has no column:
 * a comparison on it matches nothing (`ne` and `nin` match everything). Pure.
 */
import { invalidRequest } from "../../ops/errors.js";
import type { AttributeFilter, ComparisonFilter, CompoundFilter } from "../../tools/file-search/library.js";

export type AttributeValue = string | number | boolean;
type ValueKind = "s" | "n" | "b";

const COMPARISONS = new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"]);
const SQL_OP: Record<string, string> = { eq: "=", ne: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" };

function kindOf(v: AttributeValue): ValueKind {
  return typeof v === "string" ? "s" : typeof v === "number" ? "n" : "b";
}

/** The column holding attribute `key` when its value is of `value`'s type: `a_<hex of the key>_<s|n|b>` (any key is a safe identifier). */
export function attributeColumn(key: string, value: AttributeValue): string {
  return `a_${Buffer.from(key, "utf8").toString("hex")}_${kindOf(value)}`;
}

/** Every attribute as its column, for a row of the index. */
export function attributeColumns(attributes: Record<string, AttributeValue> | null): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [k, v] of Object.entries(attributes ?? {})) out[attributeColumn(k, v)] = v;
  return out;
}

/** The Arrow type a new attribute column is made with (as LanceDB's `addColumns` SQL). */
export function columnSqlType(column: string): string {
  return column.endsWith("_n") ? "CAST(NULL AS DOUBLE)" : column.endsWith("_b") ? "CAST(NULL AS BOOLEAN)" : "CAST(NULL AS STRING)";
}

function literal(v: AttributeValue): string {
  if (typeof v === "string") return `'${v.replaceAll("'", "''")}'`;
  if (typeof v === "boolean") return v ? "TRUE" : "FALSE";
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

const bad = (message: string, param: string) => invalidRequest(message, param, "invalid_value");

/** Checks a request's `filters` (400 naming the part at fault); null stays null. */
export function checkFilter(raw: unknown, param = "filters"): AttributeFilter | null {
  if (raw === undefined || raw === null) return null;
  const f = raw as { type?: unknown; key?: unknown; value?: unknown; filters?: unknown };
  if (typeof raw !== "object" || Array.isArray(raw)) throw bad(`Invalid '${param}': expected an object.`, param);
  if (f.type === "and" || f.type === "or") {
    if (!Array.isArray(f.filters) || f.filters.length === 0) throw bad(`Invalid '${param}.filters': expected a non-empty array.`, `${param}.filters`);
    return { type: f.type, filters: f.filters.map((sub, i) => checkFilter(sub, `${param}.filters[${i}]`)!) };
  }
  if (typeof f.type !== "string" || !COMPARISONS.has(f.type)) throw bad(`Invalid '${param}.type': expected one of eq, ne, gt, gte, lt, lte, in, nin, and, or.`, `${param}.type`);
  if (typeof f.key !== "string" || !f.key) throw bad(`Invalid '${param}.key': expected a string.`, `${param}.key`);
  const scalar = (v: unknown) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean";
  if (f.type === "in" || f.type === "nin") {
    if (!Array.isArray(f.value) || f.value.length === 0 || !f.value.every((v) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v)))) {
      throw bad(`Invalid '${param}.value': '${f.type}' takes a non-empty array of strings and numbers.`, `${param}.value`);
    }
  } else if (!scalar(f.value)) throw bad(`Invalid '${param}.value': expected a string, number or boolean.`, `${param}.value`);
  return { type: f.type as ComparisonFilter["type"], key: f.key, value: f.value as ComparisonFilter["value"] };
}

/** The where-clause of a checked filter over a table whose columns are `columns`. */
export function filterSql(filter: AttributeFilter, columns: ReadonlySet<string>): string {
  if (filter.type === "and" || filter.type === "or") return `(${(filter as CompoundFilter).filters.map((f) => filterSql(f, columns)).join(filter.type === "and" ? " AND " : " OR ")})`;
  const { key, value } = filter as ComparisonFilter;
  if (filter.type === "in" || filter.type === "nin") {
    const values = value as Array<string | number>;
    const parts: string[] = [];
    for (const kind of ["s", "n"] as const) {
      const ofKind = values.filter((v) => kindOf(v) === kind);
      const column = ofKind.length > 0 ? attributeColumn(key, ofKind[0]!) : null;
      if (column && columns.has(column)) parts.push(`${column} IN (${ofKind.map(literal).join(", ")})`);
    }
    const any = parts.length === 0 ? "FALSE" : `(${parts.join(" OR ")})`;
    return filter.type === "in" ? any : `(NOT COALESCE(${any}, FALSE))`;
  }
  const v = value as AttributeValue;
  const column = attributeColumn(key, v);
  if (!columns.has(column)) return filter.type === "ne" ? "TRUE" : "FALSE";
  if (filter.type === "ne") return `(${column} IS NULL OR ${column} <> ${literal(v)})`;
  if (typeof v === "boolean" && filter.type !== "eq") throw bad(`Invalid 'filters': '${filter.type}' does not compare booleans.`, "filters");
  return `${column} ${SQL_OP[filter.type]} ${literal(v)}`;
}
