import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two cores: keep process-spawning suites from starving each other.
    maxWorkers: 2,
    // Test files share their worker process instead of each re-importing the services: on a fresh
    // 2-core CI machine imports were 270 of the suite's 866 s, 30 s without isolation (700 s in
    // all). A test file that changes process-wide state (process.env, globals, umask) restores it.
    isolate: false,
  },
});
