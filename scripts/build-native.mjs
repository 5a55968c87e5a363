// Compiles the CRC-32C addon (engine/native/crc32c/crc32c.c over ISA-L's crc32_iscsi) into
// dist/crc32c.node with the system C compiler, against the N-API headers of the npm package
// node-api-headers (or Node's own /usr/include/node): no node-gyp, no header download.
//
// A failed build does not fail the CLI build: the engine then falls back to @node-rs/crc32 and
// says so. The reason is kept in dist/crc32c.unavailable.txt, which engine/records/crc.ts reads
// to explain the fallback (and which fails the addon test under CI=true).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);

export const CRC32C_SOURCE = path.join(root, 'engine/native/crc32c/crc32c.c');
export const CRC32C_ADDON = path.join(root, 'dist/crc32c.node');
export const CRC32C_UNAVAILABLE = path.join(root, 'dist/crc32c.unavailable.txt');

/** Directories holding node_api.h, best first. */
function napiIncludeDirs() {
  const dirs = [];
  try {
    dirs.push(require('node-api-headers').include_dir);
  } catch {
    // not installed: try Node's own headers
  }
  dirs.push('/usr/include/node', path.join(path.dirname(path.dirname(process.execPath)), 'include/node'));
  return dirs.filter((d) => fs.existsSync(path.join(d, 'node_api.h')));
}

function upToDate() {
  try {
    const out = fs.statSync(CRC32C_ADDON).mtimeMs;
    return out >= fs.statSync(CRC32C_SOURCE).mtimeMs && out >= fs.statSync(fileURLToPath(import.meta.url)).mtimeMs;
  } catch {
    return false;
  }
}

function unavailable(reason) {
  fs.mkdirSync(path.dirname(CRC32C_UNAVAILABLE), { recursive: true });
  fs.rmSync(CRC32C_ADDON, { force: true });
  fs.writeFileSync(CRC32C_UNAVAILABLE, reason + '\n');
  process.stderr.write(`warning: the CRC-32C addon was not built, the engine falls back to @node-rs/crc32: ${reason}\n`);
  return { built: false, reason };
}

/** Builds dist/crc32c.node unless it is newer than its source; returns whether an addon is there. */
export async function buildCrc32cAddon({ force = false } = {}) {
  if (!force && upToDate()) return { built: true, reason: null };
  const includes = napiIncludeDirs();
  if (includes.length === 0) {
    return unavailable('no N-API headers: node_api.h is in neither node_modules/node-api-headers/include (npm ci installs it) nor /usr/include/node');
  }
  if (!fs.existsSync('/usr/include/isa-l.h') && !fs.existsSync('/usr/local/include/isa-l.h')) {
    return unavailable('ISA-L headers missing (isa-l.h): install libisal-dev (scripts/install-system-deps.sh does)');
  }
  const cc = process.env.CC || 'cc';
  fs.mkdirSync(path.dirname(CRC32C_ADDON), { recursive: true });
  const tmp = `${CRC32C_ADDON}.tmp-${process.pid}`;
  const args = ['-O3', '-shared', '-fPIC', '-Wall', '-Wextra', '-Werror', `-I${includes[0]}`, '-o', tmp, CRC32C_SOURCE, '-lisal'];
  try {
    const r = await execa(cc, args, { reject: false, timeout: 60_000 });
    if (r.failed) {
      const why = r.code === 'ENOENT' ? `no C compiler '${cc}' (install gcc, or set CC)` : `${cc} ${args.join(' ')} failed: ${(r.stderr || r.stdout || r.shortMessage).toString().trim().slice(0, 800)}`;
      return unavailable(why);
    }
    fs.renameSync(tmp, CRC32C_ADDON);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  fs.rmSync(CRC32C_UNAVAILABLE, { force: true });
  return { built: true, reason: null };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await buildCrc32cAddon({ force: process.argv.includes('--force') });
  if (r.built) process.stdout.write(`built ${path.relative(process.cwd(), CRC32C_ADDON)}\n`);
  else process.exitCode = process.env.CI === 'true' ? 1 : 0;
}
