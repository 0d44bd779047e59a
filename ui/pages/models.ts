import { api } from "../api.js";
import { fill, fmt, h, table } from "../dom.js";

interface Endpoints {
  probe_interval_ms: number | null;
  endpoints: { name: string; kind: string; url: string; state: string; in_flight: number; max_concurrency: number; cooldown_remaining_ms: number; last_probe: { at: number; ok: boolean; detail: string } | null }[];
  models: { model: string; endpoints: string[] }[];
}

/** Every endpoint's live health, requests in flight, cooldown and last probe; which endpoints serve each model. */
export function modelsPage(main: HTMLElement) {
  const body = h("div");
  main.append(body);
  const draw = async () => {
    const e = await api<Endpoints>("GET", "/v1/admin/endpoints");
    const state = new Map(e.endpoints.map((ep) => [ep.name, ep.state]));
    fill(
      body,
      table(
        "Endpoints",
        ["Endpoint", "Kind", "URL", "Health", "In flight", "Cooldown left", "Last probe"],
        e.endpoints.map((ep) => [
          ep.name,
          ep.kind,
          h("code", {}, ep.url),
          h("span", { class: `state state-${ep.state}` }, ep.state),
          `${ep.in_flight} / ${ep.max_concurrency}`,
          ep.cooldown_remaining_ms > 0 ? `${(ep.cooldown_remaining_ms / 1000).toFixed(1)} s` : "–",
          ep.last_probe ? `${ep.last_probe.ok ? "ok" : "failed"} (${ep.last_probe.detail}) at ${fmt.time(ep.last_probe.at)}` : e.probe_interval_ms ? "not yet" : "probes off",
        ]),
      ),
      table(
        "Models",
        ["Model", "Endpoints"],
        e.models.map((m) => [m.model, m.endpoints.map((n) => `${n} (${state.get(n) ?? "?"})`).join(", ")]),
      ),
    );
  };
  void draw().catch(() => {});
  const timer = setInterval(() => void draw().catch(() => {}), 2_000);
  return () => clearInterval(timer);
}
