/** JSON with object keys sorted at every depth (undefined members left out, as JSON.stringify does; undefined array elements are null). */
export function canonicalJson(value: unknown): string {
  return append("", value);
}

/**
 * `out` followed by `value` in canonical form. One string grown in place (no array and no
 * joined string per object or array): a cache key covers the whole conversation, so this
 * walks every item of the history on each request of a cached model.
 */
function append(out: string, value: unknown): string {
  if (value === null || typeof value !== "object") return out + (JSON.stringify(value) ?? "null");
  if (Array.isArray(value)) {
    out += "[";
    for (let i = 0; i < value.length; i++) out = append(i === 0 ? out : out + ",", value[i]);
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let sep = "{";
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out = append(out + sep + JSON.stringify(k) + ":", v);
    sep = ",";
  }
  return sep === "{" ? out + "{}" : out + "}";
}

/** The request's fields minus the unkeyed ones (null and undefined count as absent). */
export function keyedFields(body: Record<string, unknown>, unkeyed: ReadonlySet<string>): Record<string, unknown> {
  const keyed: Record<string, unknown> = {};
  for (const k in body) {
    const v = body[k];
    if (!unkeyed.has(k) && v !== undefined && v !== null) keyed[k] = v;
  }
  return keyed;
}
