import { defineConfig } from 'vitest/config';

// Tests that boot QEMU guests (*.vm.test.ts): one file at a time, after the parallel run
// (vitest.config.ts says why).
export default defineConfig({
  test: {
    include: ['engine/**/*.vm.test.ts', 'harness/**/*.vm.test.ts', 'test/**/*.vm.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    fileParallelism: false,
  },
});
