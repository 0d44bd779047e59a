import { afterEach } from "vitest";
import type { StartOptions } from "../../src/server.js";
import { startMockUpstream, type MockUpstream } from "./mock-upstream.js";
import { startTestRouter, type TestRouter } from "./router.js";

/**
 * Servers started inside one test and stopped after it (newest first), for
 * suites where each test needs its own mocks and router.
 */
export function usePerTestServers(): { mocks(n: number): Promise<MockUpstream[]>; router(raw: Record<string, unknown>, opts?: StartOptions): Promise<TestRouter> } {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  return {
    async mocks(n) {
      const out: MockUpstream[] = [];
      for (let i = 0; i < n; i++) {
        const m = await startMockUpstream();
        cleanups.push(() => m.close());
        out.push(m);
      }
      return out;
    },
    async router(raw, opts = {}) {
      const r = await startTestRouter(raw, opts);
      cleanups.push(() => r.close(500));
      return r;
    },
  };
}
