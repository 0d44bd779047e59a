import { usage, utcDay, type UsageRow } from "../api.js";
import { lineChart } from "../chart.js";
import { field, fill, fmt, h, table } from "../dom.js";

/** Requests and tokens per key and model by UTC day (GET /v1/usage): a chart, the table, a CSV export. */
export function usagePage(main: HTMLElement) {
  const from = h("input", { type: "date", value: utcDay(-13) });
  const to = h("input", { type: "date", value: utcDay() });
  const keyFilter = h("input", { type: "text", placeholder: "every key", autocomplete: "off" });
  const status = h("p", { role: "status", class: "status" });
  const out = h("div");
  let rows: UsageRow[] = [];
  const exportCsv = h("button", { type: "button", class: "secondary" }, "Export CSV");
  exportCsv.addEventListener("click", () => {
    const lines = [["date", "key", "model", "requests", "input_tokens", "output_tokens", "total_tokens"].join(",")];
    for (const r of rows) lines.push([r.date, r.key, r.model, r.requests, r.input_tokens, r.output_tokens, r.total_tokens].map(csvCell).join(","));
    const url = URL.createObjectURL(new Blob([`${lines.join("\n")}\n`], { type: "text/csv" }));
    const a = h("a", { href: url, download: `usage-${from.value}-${to.value}.csv` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
  const form = h("form", { class: "filters", "aria-label": "Usage range" }, field("From", from), field("To", to), field("Key", keyFilter), h("button", { type: "submit" }, "Show usage"), " ", exportCsv);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void draw();
  });
  main.append(form, status, out);

  const draw = async () => {
    try {
      const u = await usage(from.value, to.value, keyFilter.value.trim() || undefined);
      rows = u.data;
      fill(status, "");
      // Every day of the range, the quiet ones as 0.
      const days: string[] = [];
      for (let t = Date.parse(`${u.from}T00:00:00Z`); t <= Date.parse(`${u.to}T00:00:00Z`); t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
      const keys = [...new Set(u.data.map((r) => r.key))].sort();
      const x = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
      fill(
        out,
        u.data.length ? lineChart("Tokens per day by key", x, keys.map((k) => [k || "(no key)", days.map((d) => u.data.filter((r) => r.date === d && r.key === k).reduce((a, r) => a + r.total_tokens, 0))]), { bars: true, xRange: [x[0]! - 43_200, x[x.length - 1]! + 43_200] }) : h("p", {}, "No usage in this range."),
        table("Totals per key and model", ["Key", "Model", "Requests", "Input tokens", "Output tokens", "Total tokens"], u.totals.map((r) => [r.key, r.model, fmt.int(r.requests), fmt.int(r.input_tokens), fmt.int(r.output_tokens), fmt.int(r.total_tokens)])),
        table("By day", ["Day", "Key", "Model", "Requests", "Input tokens", "Output tokens", "Total tokens"], u.data.map((r) => [r.date!, r.key, r.model, fmt.int(r.requests), fmt.int(r.input_tokens), fmt.int(r.output_tokens), fmt.int(r.total_tokens)])),
      );
    } catch (err) {
      fill(status, (err as Error).message);
    }
  };
  void draw();
}

/** A CSV cell (RFC 4180), and never a formula a spreadsheet would run. */
function csvCell(v: string | number | undefined): string {
  let s = String(v ?? "");
  if (/^[=+\-@]/.test(s)) s = `'${s}`;
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
