import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['engine/**/*.test.ts', 'harness/**/*.test.ts', 'test/**/*.test.ts'],
    // *.solo.test.ts compare whole-device disk figures with another tool: other suites'
    // writes to the same disk would skew them, so they run alone (vitest.solo.config.ts).
    exclude: ['**/node_modules/**', '**/*.solo.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Broker and VM tests spawn real processes; two cores cannot run many suites at once.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
