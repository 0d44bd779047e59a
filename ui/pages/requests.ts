import { api, ApiFailure } from "../api.js";
import { fill, fmt, h, table } from "../dom.js";

interface RecentRequest {
  request_id: string;
  created_at: number;
  /** "POST" over HTTP, "WS" for a response made over a WebSocket. */
  method: string;
  route: string;
  model: string;
  key: string;
  status: number;
  latency_ms: number;
  input_tokens: number;
  output_tokens: number;
  response_id: string | null;
  background: boolean;
  trace_id: string | null;
}

/** The inference requests this instance answered lately; a response opens to its input, output and trace id. */
export function requestsPage(main: HTMLElement) {
  const detail = h("section", { "aria-label": "Response", class: "detail" });
  const list = h("div");
  main.append(h("p", { class: "lead" }, "The last 200 inference requests this instance answered (newest first). Open a response to see its input and output."), detail, list);
  const draw = async () => {
    const r = await api<{ data: RecentRequest[] }>("GET", "/v1/admin/requests");
    fill(
      list,
      table(
        "Recent requests",
        ["Time", "Key", "Model", "Route", "Status", "Input tokens", "Output tokens", "Latency", "Response"],
        r.data.map((q) => [
          fmt.time(Math.floor(q.created_at)),
          q.key || "(no key)",
          q.model,
          q.method === "WS" ? `${q.route} (WebSocket)` : q.route,
          String(q.status),
          fmt.int(q.input_tokens),
          fmt.int(q.output_tokens),
          fmt.ms(q.latency_ms),
          q.response_id ? h("button", { type: "button", class: "link", "aria-label": `Open ${q.response_id}`, onclick: () => void open(q.response_id!, q.trace_id) }, q.response_id) : "–",
        ]),
      ),
    );
  };
  const open = async (id: string, traceId: string | null) => {
    try {
      const r = await api<{ id: string; key: string | null; trace_id: string | null; input: unknown[]; response: { status: string; output: unknown[]; model: string; usage: unknown } }>("GET", `/v1/admin/responses/${encodeURIComponent(id)}`);
      fill(
        detail,
        h("h2", {}, `Response ${r.id}`),
        h("dl", {}, h("dt", {}, "Key"), h("dd", {}, r.key ?? "(no key)"), h("dt", {}, "Status"), h("dd", {}, r.response.status), h("dt", {}, "Model"), h("dd", {}, r.response.model), h("dt", {}, "Trace id"), h("dd", {}, r.trace_id ?? traceId ?? "tracing is off")),
        h("h3", {}, "Input"),
        h("pre", { "aria-label": "Input" }, JSON.stringify(r.input, null, 2)),
        h("h3", {}, "Output"),
        h("pre", { "aria-label": "Output" }, JSON.stringify(r.response.output, null, 2)),
        h("button", { type: "button", class: "secondary", onclick: () => detail.replaceChildren() }, "Close"),
      );
    } catch (err) {
      fill(detail, h("p", { role: "status" }, err instanceof ApiFailure ? err.message : String(err)));
    }
    detail.scrollIntoView();
  };
  void draw().catch(() => {});
  const timer = setInterval(() => void draw().catch(() => {}), 5_000);
  return () => clearInterval(timer);
}
