import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration suites start real servers on loopback; keep parallelism modest for a 2-core box.
    maxWorkers: 2,
  },
});
