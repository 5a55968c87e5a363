// What a test needs from the machine (root, a loop device, fio, O_DIRECT, QEMU). Under CI=true
// a missing requirement FAILS the test with its reason: CI must never be green without having
// exercised what the test is about. Outside CI the test is skipped visibly, with the reason
// (vitest reports it as skipped, never as passed).
import type { TestContext } from 'vitest';

export function inCi(): boolean {
  const v = process.env.CI;
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}

export class MissingRequirementError extends Error {
  constructor(reason: string) {
    super(`${reason} (CI=true: a missing requirement fails the test; scripts/install-system-deps.sh installs what the tests need)`);
    this.name = 'MissingRequirementError';
  }
}

/**
 * Call when a requirement is missing: throws under CI, otherwise skips the running test with
 * the reason. Never returns (vitest's skip throws too), so code after it runs only when met.
 */
export function missingRequirement(ctx: TestContext, reason: string): never {
  if (inCi()) throw new MissingRequirementError(reason);
  return ctx.skip(`needs: ${reason}`);
}

/**
 * nats-server v2.12.1 in durolab's cache (`make nats`): under CI=true a missing or other version
 * fails the test with the command to run; outside CI the test is skipped with it.
 */
export async function requireNats(ctx: TestContext): Promise<{ binary: string; version: string }> {
  const { natsInstallProblem, ensureNats } = await import('../harness/targets/nats/install.ts');
  const problem = await natsInstallProblem();
  if (problem) missingRequirement(ctx, problem);
  return ensureNats();
}
