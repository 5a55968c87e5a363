// Compiles the engine's N-API addons with the system C compiler into dist/, against the N-API
// headers of the npm package node-api-headers (or Node's own /usr/include/node): no node-gyp,
// no header download.
//   crc32c.node  engine/native/crc32c/: CRC-32C (an own AVX-512 VPCLMULQDQ + crc32 kernel over
//                ISA-L's crc32_iscsi, libisal-dev), the record-framing walk and the one-call
//                append (engine/records/crc.ts loads it)
//   pwrite.node  engine/native/pwrite/pwrite.c, the append's write step without fs.writeSync's
//                per-call overhead (engine/storage/file-write.ts loads it)
//   sendfile.node engine/native/sendfile/sendfile.c, zero-copy fetch: sendfile(2) from a segment
//                to the consumer's socket on a worker thread (engine/server/kafka/zero-copy.ts)
//
// A failed build does not fail the CLI build: the engine then falls back (@node-rs/crc32,
// fs.writeSync, the copy path of a fetch) and says so. The reason is kept in dist/<name>.unavailable.txt, which the loader
// reads to explain the fallback (and which fails the addon's test under CI=true).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);

/** Every addon: its directory (every .c in it is compiled), the libraries it links and the header it needs beyond N-API's. */
export const NATIVE_ADDONS = [
  { name: 'crc32c', dir: 'engine/native/crc32c', libs: ['-lisal'], header: { file: 'isa-l.h', package: 'libisal-dev' } },
  { name: 'pwrite', dir: 'engine/native/pwrite', libs: [], header: null },
  { name: 'sendfile', dir: 'engine/native/sendfile', libs: [], header: null },
];

/** The addon's files: its .c sources (sorted) and its headers. */
function addonFiles(addon) {
  const dir = path.join(root, addon.dir);
  const names = fs.readdirSync(dir).filter((n) => n.endsWith('.c') || n.endsWith('.h')).sort();
  // Headers shared by every addon (engine/native/*.h) count for being up to date too.
  const shared = fs.readdirSync(path.join(root, 'engine/native')).filter((n) => n.endsWith('.h')).map((n) => path.join(root, 'engine/native', n));
  return { sources: names.filter((n) => n.endsWith('.c')).map((n) => path.join(dir, n)), all: [...names.map((n) => path.join(dir, n)), ...shared] };
}

export const addonPath = (name) => path.join(root, 'dist', `${name}.node`);
export const unavailablePath = (name) => path.join(root, 'dist', `${name}.unavailable.txt`);

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

function upToDate(addon) {
  try {
    const out = fs.statSync(addonPath(addon.name)).mtimeMs;
    return [...addonFiles(addon).all, fileURLToPath(import.meta.url)].every((f) => out >= fs.statSync(f).mtimeMs);
  } catch {
    return false;
  }
}

function unavailable(addon, reason) {
  fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
  fs.rmSync(addonPath(addon.name), { force: true });
  fs.writeFileSync(unavailablePath(addon.name), reason + '\n');
  process.stderr.write(`warning: the ${addon.name} addon was not built, the engine falls back (see ${path.relative(root, unavailablePath(addon.name))}): ${reason}\n`);
  return { name: addon.name, built: false, reason };
}

/** Builds dist/<name>.node unless it is newer than its source; returns whether the addon is there. */
async function buildAddon(addon, force) {
  if (!force && upToDate(addon)) return { name: addon.name, built: true, reason: null };
  const includes = napiIncludeDirs();
  if (includes.length === 0) {
    return unavailable(addon, 'no N-API headers: node_api.h is in neither node_modules/node-api-headers/include (npm ci installs it) nor /usr/include/node');
  }
  if (addon.header && !fs.existsSync(`/usr/include/${addon.header.file}`) && !fs.existsSync(`/usr/local/include/${addon.header.file}`)) {
    return unavailable(addon, `headers missing (${addon.header.file}): install ${addon.header.package} (scripts/install-system-deps.sh does)`);
  }
  const cc = process.env.CC || 'cc';
  const out = addonPath(addon.name);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.tmp-${process.pid}`;
  const args = ['-O3', '-shared', '-fPIC', '-Wall', '-Wextra', '-Werror', `-I${includes[0]}`, '-o', tmp, ...addonFiles(addon).sources, ...addon.libs];
  try {
    const r = await execa(cc, args, { reject: false, timeout: 60_000 });
    if (r.failed) {
      const why = r.code === 'ENOENT' ? `no C compiler '${cc}' (install gcc, or set CC)` : `${cc} ${args.join(' ')} failed: ${(r.stderr || r.stdout || r.shortMessage).toString().trim().slice(0, 800)}`;
      return unavailable(addon, why);
    }
    fs.renameSync(tmp, out);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  fs.rmSync(unavailablePath(addon.name), { force: true });
  return { name: addon.name, built: true, reason: null };
}

/** Builds every addon that is out of date; one result per addon. */
export async function buildNativeAddons({ force = false } = {}) {
  const results = [];
  for (const addon of NATIVE_ADDONS) results.push(await buildAddon(addon, force));
  return results;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const results = await buildNativeAddons({ force: process.argv.includes('--force') });
  for (const r of results) {
    if (r.built) process.stdout.write(`built ${path.relative(process.cwd(), addonPath(r.name))}\n`);
  }
  if (results.some((r) => !r.built) && process.env.CI === 'true') process.exitCode = 1;
}
