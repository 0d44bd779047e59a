/** JSON with object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
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
