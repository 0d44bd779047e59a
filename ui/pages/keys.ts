import { api, ApiFailure, usage, utcDay } from "../api.js";
import { field, fill, fmt, h, table } from "../dom.js";

export interface AdminKey {
  id: string;
  name: string;
  source: "config" | "api";
  read_only: boolean;
  redacted_value: string;
  role: "admin" | "user";
  models: string[] | null;
  limits: { requests_per_minute?: number; tokens_per_minute?: number; max_concurrent?: number } | null;
  budget: { tokens_per_day?: number; tokens_per_month?: number } | null;
  expires_at: number | null;
  metadata: Record<string, string>;
  created_at: number | null;
}

const LIMITS = [
  ["Requests per minute", "limits", "requests_per_minute"],
  ["Tokens per minute", "limits", "tokens_per_minute"],
  ["Max concurrent", "limits", "max_concurrent"],
  ["Tokens per day", "budget", "tokens_per_day"],
  ["Tokens per month", "budget", "tokens_per_month"],
] as const;

/** Keys: make one (its secret shown once), change its limits, revoke it; what each key used today and this month. */
export function keysPage(main: HTMLElement) {
  const status = h("p", { role: "status", class: "status" });
  const created = h("section", { "aria-label": "New key" });
  const list = h("div");
  main.append(createForm(status, created, () => void draw()), created, status, list);

  const draw = async () => {
    const [keys, today, month] = await Promise.all([
      api<{ data: AdminKey[] }>("GET", "/v1/admin/keys"),
      usage(utcDay(), utcDay()),
      usage(`${utcDay().slice(0, 8)}01`, utcDay()),
    ]);
    const sum = (rows: typeof today.totals, key: string) => rows.filter((r) => r.key === key).reduce((a, r) => ({ requests: a.requests + r.requests, tokens: a.tokens + r.total_tokens }), { requests: 0, tokens: 0 });
    fill(
      list,
      table(
        "API keys",
        ["Name", "Key", "Source", "Role", "Models", "Limits", "Requests today", "Tokens today", "Tokens this month", "Expires", "Actions"],
        keys.data.map((k) => {
          const d = sum(today.totals, k.name);
          const m = sum(month.totals, k.name);
          return [
            h("span", { "data-key-name": k.name }, k.name),
            h("code", {}, k.redacted_value),
            k.source === "config" ? "config (read-only)" : "api",
            k.role,
            k.models?.join(", ") ?? "all",
            limitsText(k),
            fmt.int(d.requests),
            budgetText(d.tokens, k.budget?.tokens_per_day),
            budgetText(m.tokens, k.budget?.tokens_per_month),
            k.expires_at ? fmt.time(k.expires_at) : "never",
            k.read_only ? "–" : actions(k, status, list, () => void draw()),
          ];
        }),
      ),
    );
  };
  void draw().catch((err: unknown) => fill(status, (err as Error).message));
}

function limitsText(k: AdminKey): string {
  const parts = LIMITS.flatMap(([label, group, name]) => {
    const v = (k[group] as Record<string, number | undefined> | null)?.[name];
    return v === undefined ? [] : [`${label.toLowerCase()}: ${fmt.int(v)}`];
  });
  return parts.length ? parts.join("; ") : "none";
}

function budgetText(used: number, budget: number | undefined): string {
  return budget ? `${fmt.int(used)} of ${fmt.int(budget)} (${Math.round((used / budget) * 100)}%)` : fmt.int(used);
}

function numberInput(value?: number): HTMLInputElement {
  const input = h("input", { type: "number", min: "1", step: "1", inputmode: "numeric" });
  if (value !== undefined) input.value = String(value);
  return input;
}

/** The limit fields' values: limits and budget objects (null when none is set). */
function readLimits(inputs: HTMLInputElement[]): { limits: Record<string, number> | null; budget: Record<string, number> | null } {
  const out: { limits: Record<string, number> | null; budget: Record<string, number> | null } = { limits: null, budget: null };
  LIMITS.forEach(([, group, name], i) => {
    const v = inputs[i]!.value.trim();
    if (v) (out[group] ??= {})[name] = Number(v);
  });
  return out;
}

function createForm(status: HTMLElement, created: HTMLElement, refresh: () => void): HTMLElement {
  const name = h("input", { type: "text", required: true, pattern: "[A-Za-z0-9._:@/-]+", autocomplete: "off" });
  const role = h("select", {}, h("option", { value: "user" }, "user"), h("option", { value: "admin" }, "admin"));
  const models = h("input", { type: "text", placeholder: "every model", autocomplete: "off" });
  const expires = h("input", { type: "date" });
  const limits = LIMITS.map(() => numberInput());
  const form = h(
    "form",
    { class: "create", "aria-label": "Create a key" },
    h("h2", {}, "Create a key"),
    h("div", { class: "grid" }, field("Name", name), field("Role", role), field("Models", models, "comma-separated names or globs; empty: every model"), field("Expires", expires, "UTC day; empty: never")),
    h("div", { class: "grid" }, ...LIMITS.map(([label], i) => field(label, limits[i]!))),
    h("button", { type: "submit" }, "Create key"),
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body: Record<string, unknown> = { name: name.value.trim(), role: role.value, ...readLimits(limits) };
    const list = models.value.split(",").map((s) => s.trim()).filter(Boolean);
    if (list.length) body.models = list;
    if (expires.value) body.expires_at = Math.floor(Date.parse(`${expires.value}T23:59:59Z`) / 1000);
    try {
      const made = await api<AdminKey & { key: string }>("POST", "/v1/admin/keys", body);
      showSecret(created, made);
      fill(status, `Key '${made.name}' created.`);
      form.reset();
      refresh();
    } catch (err) {
      fill(status, err instanceof ApiFailure ? `Not created: ${err.message}` : String(err));
    }
  });
  return form;
}

/**
 * The secret, once: as text (selectable, found by its label and as a read-only textbox), with a
 * copy button; gone when dismissed or the page changes.
 */
function showSecret(box: HTMLElement, made: AdminKey & { key: string }): void {
  const secret = h("code", { class: "secret", id: "new-key", role: "textbox", "aria-readonly": "true", "aria-labelledby": "new-key-label", tabindex: "0" }, made.key);
  const copied = h("span", { role: "status", class: "status" });
  const copy = h("button", { type: "button" }, "Copy key");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(made.key);
    } catch {
      // No clipboard permission (an http:// origin): select the text for the person to copy.
      getSelection()?.selectAllChildren(secret);
      document.execCommand("copy");
    }
    fill(copied, "Copied.");
  });
  const done = h("button", { type: "button", class: "secondary", onclick: () => box.replaceChildren() }, "Done");
  fill(
    box,
    h(
      "div",
      { class: "secret-box" },
      h("p", {}, `The key for '${made.name}'. Copy it now: it is not shown again.`),
      h("div", { class: "field" }, h("span", { id: "new-key-label", class: "label" }, "New key (shown once)"), secret),
      copy,
      " ",
      done,
      copied,
    ),
  );
}

function actions(k: AdminKey, status: HTMLElement, list: HTMLElement, refresh: () => void): HTMLElement {
  const edit = h("button", { type: "button", class: "secondary" }, "Edit limits");
  const revoke = h("button", { type: "button", class: "danger" }, "Revoke");
  revoke.addEventListener("click", async () => {
    try {
      await api("DELETE", `/v1/admin/keys/${encodeURIComponent(k.id)}`);
      fill(status, `Key '${k.name}' revoked: it answers 401 on every instance within a second.`);
      refresh();
    } catch (err) {
      fill(status, `Not revoked: ${(err as Error).message}`);
    }
  });
  edit.addEventListener("click", () => {
    const inputs = LIMITS.map(([, group, name]) => numberInput((k[group] as Record<string, number> | null)?.[name]));
    const form = h(
      "form",
      { class: "edit", "aria-label": `Limits of ${k.name}` },
      h("h2", {}, `Limits of ${k.name}`),
      h("div", { class: "grid" }, ...LIMITS.map(([label], i) => field(label, inputs[i]!))),
      h("button", { type: "submit" }, "Save limits"),
      " ",
      h("button", { type: "button", class: "secondary", onclick: () => form.remove() }, "Cancel"),
    );
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        await api("POST", `/v1/admin/keys/${encodeURIComponent(k.id)}`, readLimits(inputs));
        fill(status, `Limits of '${k.name}' saved.`);
        form.remove();
        refresh();
      } catch (err) {
        fill(status, `Not saved: ${(err as Error).message}`);
      }
    });
    list.before(form);
    inputs[0]!.focus();
  });
  return h("div", { class: "actions" }, edit, " ", revoke);
}
