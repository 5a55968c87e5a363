#!/usr/bin/env node
// The CLI is bundled by scripts/build.mjs (run by `npm ci` through `prepare`, and by make).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bundle = path.join(root, 'dist/durolab.mjs');
if (!existsSync(bundle)) {
  const { buildCli } = await import(pathToFileURL(path.join(root, 'scripts/build.mjs')).href);
  await buildCli();
}
await import(pathToFileURL(bundle).href);
