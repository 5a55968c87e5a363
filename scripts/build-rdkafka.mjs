// Builds @confluentinc/kafka-javascript's native binding (librdkafka) from the sources its npm
// package ships, against Debian's system libraries, with no network.
//
// Its own install script (node-pre-gyp) first downloads a prebuilt binding from GitHub, and its
// build-from-source fallback links librdkafka statically after `configure --install-deps
// --source-deps-only`, which downloads zlib, OpenSSL, zstd and curl sources: neither is
// reachable here. So package.json denies that script (`allowScripts`), and this runs node-gyp
// itself with CKJS_LINKING=dynamic: librdkafka's configure then takes what the system has
// (libssl-dev, zlib1g-dev; zstd, curl and SASL are left out when absent) and the binding
// links build/deps/librdkafka.so.1 through an $ORIGIN rpath. A few minutes of CPU, once: the
// result is kept until the package version, Node's ABI or RECIPE below changes.
//
// A failed build does not fail the CLI build (the http driver and the other Kafka clients do
// not need it): the reason is kept in dist/rdkafka.unavailable.txt, which the kafka driver and
// the librdkafka witness test report (the test fails on it under CI=true).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);

export const RDKAFKA_PACKAGE = '@confluentinc/kafka-javascript';
export const RDKAFKA_UNAVAILABLE = path.join(root, 'dist/rdkafka.unavailable.txt');
export const RDKAFKA_BUILD_LOG = path.join(root, 'dist/rdkafka-build.log');
const STAMP = 'durolab-build.json';
const FAILED = 'durolab-failed.json';
/** Bump when the way the binding is built changes: a built or failed binding is then rebuilt. */
const RECIPE = 'dynamic-system-libs-1';

function packageDir() {
  try {
    return path.dirname(require.resolve(`${RDKAFKA_PACKAGE}/package.json`));
  } catch {
    return null;
  }
}

function stampOf(dir) {
  const version = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  return { version, abi: process.versions.modules, node: process.versions.node, recipe: RECIPE };
}

function sameStamp(dir, file) {
  try {
    return JSON.stringify(JSON.parse(fs.readFileSync(path.join(dir, 'build', file), 'utf8'))) === JSON.stringify(stampOf(dir));
  } catch {
    return false;
  }
}

const upToDate = (dir) => fs.existsSync(path.join(dir, 'build/Release/confluent-kafka-javascript.node')) && sameStamp(dir, STAMP);

/** npm's own node-gyp: the one npm runs for install scripts (npm_config_node_gyp), else beside npm. */
function nodeGyp() {
  const candidates = [process.env.npm_config_node_gyp];
  const npmCli = process.env.npm_execpath;
  if (npmCli) candidates.push(path.join(path.dirname(path.dirname(npmCli)), 'node_modules/node-gyp/bin/node-gyp.js'));
  const prefix = path.dirname(path.dirname(process.execPath));
  candidates.push(path.join(prefix, 'lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'), '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js', '/usr/share/nodejs/node-gyp/bin/node-gyp.js');
  return candidates.find((c) => c && fs.existsSync(c)) ?? null;
}

/**
 * A directory whose include/node headers are this Node's (no header download from nodejs.org).
 * npm's nodedir is taken only when its headers are this Node's: Debian's npm sets it to /usr,
 * the system Node's, which built a binding this Node refused to load.
 */
function nodeDir() {
  const [major, minor, patch] = process.versions.node.split('.');
  const dirs = [process.env.npm_config_nodedir, path.dirname(path.dirname(process.execPath)), '/usr', '/usr/local'].filter(Boolean);
  for (const dir of dirs) {
    try {
      const h = fs.readFileSync(path.join(dir, 'include/node/node_version.h'), 'utf8');
      const v = (k) => h.match(new RegExp(`#define NODE_${k}_VERSION (\\d+)`))?.[1];
      if (v('MAJOR') === major && v('MINOR') === minor && v('PATCH') === patch) return dir;
    } catch {
      // not here
    }
  }
  return null;
}

async function missingTools() {
  const missing = [];
  for (const [tool, pkg] of [['make', 'make'], [process.env.CXX || 'g++', 'g++'], ['python3', 'python3'], ['pkg-config', 'pkg-config']]) {
    const r = await execa(tool, ['--version'], { reject: false });
    if (r.failed) missing.push(`${tool} (Debian: ${pkg})`);
  }
  for (const [header, pkg] of [['/usr/include/openssl/ssl.h', 'libssl-dev'], ['/usr/include/zlib.h', 'zlib1g-dev']]) {
    if (!fs.existsSync(header)) missing.push(`${header} (Debian: ${pkg})`);
  }
  return missing;
}

function unavailable(reason) {
  fs.mkdirSync(path.dirname(RDKAFKA_UNAVAILABLE), { recursive: true });
  fs.writeFileSync(RDKAFKA_UNAVAILABLE, reason + '\n');
  process.stderr.write(`warning: ${RDKAFKA_PACKAGE} (librdkafka) was not built; the kafka driver's librdkafka client and its witness test need it: ${reason}\n`);
  return { built: false, reason };
}

/** Builds the binding unless it is already built for this package version and Node ABI. */
export async function buildRdkafka({ force = false } = {}) {
  const dir = packageDir();
  if (!dir) return unavailable(`${RDKAFKA_PACKAGE} is not in node_modules (run npm ci)`);
  if (!force && upToDate(dir)) {
    fs.rmSync(RDKAFKA_UNAVAILABLE, { force: true });
    return { built: true, reason: null };
  }
  // A compile that failed for this version and ABI is not retried on every build (minutes each):
  // --force retries it.
  if (!force && sameStamp(dir, FAILED) && fs.existsSync(RDKAFKA_UNAVAILABLE)) {
    const reason = fs.readFileSync(RDKAFKA_UNAVAILABLE, 'utf8').trim();
    process.stderr.write(`warning: ${RDKAFKA_PACKAGE} (librdkafka) is not built: its last build failed (node scripts/build-rdkafka.mjs --force retries): ${reason.split('\n')[0]}\n`);
    return { built: false, reason };
  }
  const missing = await missingTools();
  if (missing.length > 0) return unavailable(`missing to build librdkafka: ${missing.join(', ')} (scripts/install-system-deps.sh installs them)`);
  const gyp = nodeGyp();
  if (!gyp) return unavailable("node-gyp not found (npm ships it: set npm_config_node_gyp to its bin/node-gyp.js)");
  const nodedir = nodeDir();
  const args = [gyp, 'rebuild', '--release', ...(nodedir ? [`--nodedir=${nodedir}`] : [])];
  fs.mkdirSync(path.dirname(RDKAFKA_BUILD_LOG), { recursive: true });
  process.stderr.write(`building ${RDKAFKA_PACKAGE} with librdkafka from source against system libraries (a few minutes, once; log: ${path.relative(process.cwd(), RDKAFKA_BUILD_LOG)})\n`);
  const t0 = Date.now();
  const r = await execa(process.execPath, args, {
    cwd: dir,
    reject: false,
    all: true,
    // node-gyp reads npm's nodedir from the environment over its --nodedir flag: hand it the same one.
    env: { CKJS_LINKING: 'dynamic', BUILD_LIBRDKAFKA: '1', npm_config_nodedir: nodedir ?? undefined },
    timeout: 60 * 60_000,
  });
  fs.writeFileSync(RDKAFKA_BUILD_LOG, `$ ${process.execPath} ${args.join(' ')}  (cwd ${dir}, CKJS_LINKING=dynamic)\n${r.all ?? ''}\n`);
  if (r.failed) {
    fs.mkdirSync(path.join(dir, 'build'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'build', FAILED), JSON.stringify(stampOf(dir)));
    const tail = (r.all ?? r.shortMessage ?? '').toString().trim().split('\n').slice(-15).join('\n');
    return unavailable(`node-gyp rebuild failed (${r.shortMessage}); ${nodedir ? '' : 'no local Node headers matched this Node, so node-gyp needed to download them; '}last lines of ${RDKAFKA_BUILD_LOG}:\n${tail}`);
  }
  // It must load: librdkafka.so.1 is found through the binding's $ORIGIN/../deps rpath.
  const probe = await execa(process.execPath, ['-e', `process.stdout.write(require(${JSON.stringify(RDKAFKA_PACKAGE)}).librdkafkaVersion)`], { cwd: root, reject: false });
  if (probe.failed) return unavailable(`the built binding does not load: ${(probe.stderr || probe.shortMessage).trim().slice(0, 800)}`);
  fs.writeFileSync(path.join(dir, 'build', STAMP), JSON.stringify(stampOf(dir)));
  fs.rmSync(path.join(dir, 'build', FAILED), { force: true });
  fs.rmSync(RDKAFKA_UNAVAILABLE, { force: true });
  process.stderr.write(`built ${RDKAFKA_PACKAGE} over librdkafka ${probe.stdout} in ${Math.round((Date.now() - t0) / 1000)} s\n`);
  return { built: true, reason: null };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = await buildRdkafka({ force: process.argv.includes('--force') });
  if (!r.built) process.exitCode = process.env.CI === 'true' ? 1 : 0;
}
