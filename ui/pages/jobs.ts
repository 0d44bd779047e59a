import { api } from "../api.js";
import { fill, fmt, h, table } from "../dom.js";

interface Jobs {
  store: string;
  waiting: number | null;
  running_here: number;
  data: { id: string; key: string; model: string; created_at: number; status: string }[];
}

/** Background responses: the queue's waiting count, what runs on this instance, and the recent ones with their status. */
export function jobsPage(main: HTMLElement) {
  const body = h("div");
  main.append(body);
  const draw = async () => {
    const j = await api<Jobs>("GET", "/v1/admin/jobs");
    fill(
      body,
      h("p", { class: "lead" }, `Waiting in the ${j.store === "redis" ? "shared queue" : "queue"}: ${j.waiting ?? "unknown (store unreachable)"}. Running on this instance: ${j.running_here}.`),
      table("Recent background responses", ["Response", "Key", "Model", "Created", "Status"], j.data.map((x) => [h("code", {}, x.id), x.key || "(no key)", x.model, fmt.time(x.created_at), x.status])),
    );
  };
  void draw().catch(() => {});
  const timer = setInterval(() => void draw().catch(() => {}), 3_000);
  return () => clearInterval(timer);
}
