/**
 * The console's entry: the sign-in form, then the navigation and the page the location's hash
 * names (#/keys). Each page renders into <main> and returns what stops its refresh timer.
 */
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { api, ApiFailure, session, whenRefused } from "./api.js";
import { field, fill, h } from "./dom.js";
import { configPage } from "./pages/config.js";
import { jobsPage } from "./pages/jobs.js";
import { keysPage } from "./pages/keys.js";
import { modelsPage } from "./pages/models.js";
import { overviewPage } from "./pages/overview.js";
import { requestsPage } from "./pages/requests.js";
import { usagePage } from "./pages/usage.js";

export type Page = (main: HTMLElement) => (() => void) | void;

const PAGES: [string, string, Page][] = [
  ["overview", "Overview", overviewPage],
  ["models", "Models", modelsPage],
  ["keys", "Keys", keysPage],
  ["usage", "Usage", usagePage],
  ["requests", "Requests", requestsPage],
  ["jobs", "Jobs", jobsPage],
  ["config", "Config", configPage],
];

const root = document.getElementById("app")!;
let stopPage: (() => void) | void;

function signInForm(message?: string): void {
  stopPage?.();
  const input = h("input", { type: "password", name: "admin-key", autocomplete: "off", required: true, spellcheck: "false" });
  const status = h("p", { role: "status", class: "status" }, message ?? "");
  const form = h(
    "form",
    { class: "signin", "aria-label": "Sign in" },
    h("h1", {}, "responses-router"),
    h("p", {}, "Sign in with an admin key (role: admin). It is kept for this browser tab only."),
    field("Admin key", input),
    h("button", { type: "submit" }, "Sign in"),
    status,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    session.signIn(input.value.trim());
    try {
      // The cheapest admin read tells whether the key may use the console.
      await api("GET", "/v1/admin/keys");
      input.value = "";
      if (!location.hash || location.hash === "#/") location.hash = "#/overview";
      layout();
    } catch (err) {
      session.signOut();
      fill(status, err instanceof ApiFailure ? err.message : "The router could not be reached.");
    }
  });
  fill(root, h("main", { id: "main" }, form));
  input.focus();
}

let nav: HTMLElement;
let main: HTMLElement;

function layout(): void {
  nav = h("nav", { "aria-label": "Console" }, h("ul", {}, ...PAGES.map(([id, label]) => h("li", {}, h("a", { href: `#/${id}`, "data-page": id }, label)))));
  main = h("main", { id: "main", tabindex: "-1" });
  const signOut = h("button", { type: "button", class: "secondary", onclick: () => signOutNow() }, "Sign out");
  fill(root, h("header", {}, h("span", { class: "brand" }, "responses-router"), nav, signOut), main);
  show();
}

function show(): void {
  if (!session.key()) return signInForm();
  const id = location.hash.replace(/^#\//, "") || "overview";
  const page = PAGES.find(([p]) => p === id) ?? PAGES[0]!;
  for (const a of nav.querySelectorAll("a")) {
    if (a.dataset.page === page[0]) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  stopPage?.();
  main.replaceChildren(h("h1", {}, page[1]));
  document.title = `${page[1]} · responses-router console`;
  stopPage = page[2](main);
}

function signOutNow(message?: string): void {
  session.signOut();
  signInForm(message);
}

whenRefused((message) => signOutNow(`Signed out: ${message}`));
window.addEventListener("hashchange", () => {
  if (session.key() && main?.isConnected) show();
});
if (session.key()) layout();
else signInForm();
