/** Parses "250ms", "30s", "5m", "1h", "1d" or a bare number of seconds into milliseconds. */
export function parseDuration(value: string | number): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value * 1000 : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2] ?? "s";
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit]!;
  return Math.round(n * factor);
}
