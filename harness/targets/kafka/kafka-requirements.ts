// What the kafka target's tests need: a JDK, and Maven or the cached jars. Under CI=true a
// missing one fails the test with its reason (test/requirements.ts); the jars are fetched here.
import type { TestContext } from 'vitest';
import { missingRequirement } from '../../../test/requirements.ts';
import { kafkaPrerequisiteProblem, type KafkaInstall } from './install.ts';
import { ensureKafkaRuntime } from './kafka-runtime.ts';

export async function requireKafka(ctx: TestContext): Promise<KafkaInstall> {
  const problem = kafkaPrerequisiteProblem();
  if (problem) missingRequirement(ctx, problem);
  return ensureKafkaRuntime({ log: (line) => console.log(line) });
}
