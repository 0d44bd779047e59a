import { api } from "../api.js";
import { fmt, h } from "../dom.js";

interface ConfigAnswer {
  source: string;
  last_reload: { at: number; ok: boolean; errors: string[] } | null;
  config: unknown;
}

/** The config in force, every secret redacted by the router, and what the last reload said. */
export function configPage(main: HTMLElement) {
  void api<ConfigAnswer>("GET", "/v1/admin/config").then((c) => {
    const reload = c.last_reload;
    main.append(
      h("p", { class: "lead" }, `Loaded from ${c.source}. Secrets (keys, passwords, header values) are shown as [redacted].`),
      h("section", { "aria-label": "Last reload" }, h("h2", {}, "Last reload"), !reload ? h("p", {}, "No reload since the router started.") : reload.ok ? h("p", {}, `Applied at ${fmt.time(reload.at)}.`) : h("div", { class: "errors" }, h("p", {}, `Refused at ${fmt.time(reload.at)}; the previous config stays in force:`), h("ul", {}, ...reload.errors.map((e) => h("li", {}, e))))),
      h("h2", {}, "Effective config"),
      h("pre", { "aria-label": "Effective config", class: "config" }, JSON.stringify(c.config, null, 2)),
    );
  });
}
