import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['engine/**/*.test.ts', 'harness/**/*.test.ts', 'test/**/*.test.ts'],
    // *.solo.test.ts compare whole-device disk figures with another tool: other suites'
    // writes to the same disk would skew them, so they run alone (vitest.solo.config.ts).
    // *.vm.test.ts boot QEMU guests under TCG: they run one file at a time after this run
    // (vitest.vm.config.ts), so a guest gets a core to itself rather than sharing two cores
    // with another suite's brokers, JVMs or browser (that sharing stalled guest brokers past
    // the controller's session timeout and their loads past a cut's moment).
    exclude: ['**/node_modules/**', '**/*.solo.test.ts', '**/*.vm.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Broker and VM tests spawn real processes; two cores cannot run many suites at once.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
