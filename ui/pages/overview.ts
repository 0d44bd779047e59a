import { api } from "../api.js";
import { lineChart } from "../chart.js";
import { fill, fmt, h } from "../dom.js";

interface Metrics {
  interval_ms: number;
  totals: { requests: number; errors: number; client_errors: number; input_tokens: number; output_tokens: number; duration_seconds_sum: number; duration_count: number };
  data: { t: number; requests: number; errors: number; client_errors: number; latency_ms: number | null; input_tokens: number; output_tokens: number }[];
}

/** Requests, errors, latency and tokens over time: this instance's own counters (its /metrics), sampled every few seconds. */
export function overviewPage(main: HTMLElement) {
  const tiles = h("section", { class: "tiles", "aria-label": "Totals since the router started" });
  const charts = h("section", { class: "charts", "aria-label": "Over time" });
  main.append(h("p", { class: "lead" }, "This instance's counters since it started, and what changed every few seconds (the same counters as /metrics)."), tiles, charts);
  const draw = async () => {
    const m = await api<Metrics>("GET", "/v1/admin/metrics");
    const t = m.totals;
    const mean = t.duration_count > 0 ? (t.duration_seconds_sum / t.duration_count) * 1000 : null;
    fill(
      tiles,
      tile("Requests", fmt.int(t.requests)),
      tile("Errors (5xx)", fmt.int(t.errors)),
      tile("Client errors (4xx)", fmt.int(t.client_errors)),
      tile("Mean latency", fmt.ms(mean)),
      tile("Input tokens", fmt.int(t.input_tokens)),
      tile("Output tokens", fmt.int(t.output_tokens)),
    );
    const x = m.data.map((p) => p.t / 1000);
    fill(
      charts,
      m.data.length < 2 ? h("p", {}, `The charts fill in as samples come (one every ${m.interval_ms / 1000} s).`) : null,
      lineChart("Requests and errors", x, [["requests", m.data.map((p) => p.requests)], ["5xx", m.data.map((p) => p.errors)], ["4xx", m.data.map((p) => p.client_errors)]]),
      lineChart("Mean latency (ms)", x, [["latency", m.data.map((p) => (p.latency_ms === null ? null : Math.round(p.latency_ms)))]]),
      lineChart("Tokens", x, [["input", m.data.map((p) => p.input_tokens)], ["output", m.data.map((p) => p.output_tokens)]]),
    );
  };
  void draw().catch(() => {});
  const timer = setInterval(() => void draw().catch(() => {}), 5_000);
  return () => clearInterval(timer);
}

function tile(label: string, value: string): HTMLElement {
  return h("div", { class: "tile" }, h("span", { class: "tile-label" }, label), h("strong", { class: "tile-value", "data-tile": label }, value));
}
