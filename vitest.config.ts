import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['engine/**/*.test.ts', 'harness/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Broker and VM tests spawn real processes; two cores cannot run many suites at once.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
