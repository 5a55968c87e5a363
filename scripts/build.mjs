// Bundles the TypeScript CLI into dist/durolab.mjs: one file with no build-time paths, which
// starts faster than .ts through a loader and is also what the VM image copies into the guest. Also builds
// the engine's addons beside it (dist/crc32c.node, dist/pwrite.node: scripts/build-native.mjs)
// when out of date, and @confluentinc/kafka-javascript's librdkafka binding once (scripts/build-rdkafka.mjs).
import { build } from 'esbuild';
import { buildNativeAddons } from './build-native.mjs';
import { buildRdkafka } from './build-rdkafka.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export async function buildCli() {
  await build({
    entryPoints: [path.join(root, 'harness/cli/main.ts')],
    outfile: path.join(root, 'dist/durolab.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __durolabCreateRequire } from 'node:module'; const require = __durolabCreateRequire(import.meta.url);" },
  });
  await buildNativeAddons();
  await buildRdkafka();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildCli();
}
