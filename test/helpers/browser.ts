import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Debian's Chromium (scripts/ensure-test-deps.sh installs it), driven by playwright-core. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Requests the pages made to anything but `origin` (each was refused). */
  foreign: string[];
  /** Console errors and CSP reports the pages logged. */
  errors: string[];
  close(): Promise<void>;
}

/** Bundles ui/ into dist/ui/ as `npm run build` does, so the router serves the console of this checkout. */
export function buildConsole(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/build-ui.mjs", import.meta.url))], { stdio: "inherit" });
}

/**
 * A headless Chromium with a new, empty profile, allowed to reach `origin` only: any other
 * request is refused and recorded (the console fetches nothing from the internet).
 */
export async function startBrowser(origin: string): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not at ${CHROMIUM}: install Debian's chromium (scripts/ensure-test-deps.sh does) or set CHROMIUM_PATH`);
  const profile = mkdtempSync(join(tmpdir(), "rr-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 860 } });
  const foreign: string[] = [];
  const errors: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  context.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  // A step that cannot happen fails at that step, not at the test's timeout.
  context.setDefaultTimeout(8_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    foreign,
    errors,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
