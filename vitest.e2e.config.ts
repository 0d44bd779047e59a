import { defineConfig } from "vitest/config";

/**
 * Heavy end-to-end suites kept out of `npm test`: real clients and backends that
 * need large installs (`npm run test:codex`, `npm run test:llama`).
 */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    maxWorkers: 1,
  },
});
