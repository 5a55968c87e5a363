import { defineConfig } from 'vitest/config';

// Tests that measure the whole disk device and must not share it with other suites.
export default defineConfig({
  test: {
    include: ['engine/**/*.solo.test.ts', 'harness/**/*.solo.test.ts'],
    testTimeout: 60_000,
    fileParallelism: false,
  },
});
