// Tests that spawn `durolab` child processes (brokers, clusters) run the bundled CLI,
// so the bundle must match the sources under test.
import { buildCli } from '../scripts/build.mjs';

export default async function setup(): Promise<void> {
  await buildCli();
}
