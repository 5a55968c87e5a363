// The JavaScript a guest runs, built with esbuild: the durolab CLI (so `node
// /durolab/dist/durolab.mjs broker ...` works in the guest) and the guest tools (agent,
// append workload, deps check). Pure-JS packages are bundled; native packages stay external
// and are copied, with their dependency closure, into /durolab/node_modules.
import { builtinModules } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Native addons: esbuild cannot bundle their .node binaries, so they are copied. */
const NATIVE_PACKAGES = ['@node-rs/crc32'];
/** Host-only tools that may only be imported dynamically (the guest never runs those paths). */
const HOST_ONLY_PACKAGES = ['esbuild', 'vite', 'vitest', 'playwright-core', 'tsx', 'typescript'];

export interface BundleFile {
  /** Path inside the image, relative to / (e.g. durolab/dist/durolab.mjs). */
  rel: string;
  data: Buffer;
}

export interface CopiedFile {
  rel: string;
  src: string;
}

export interface GuestBundle {
  files: BundleFile[];
  /** node_modules files copied from the host checkout. */
  nodeModules: CopiedFile[];
  packages: string[];
}

const BANNER = "import { createRequire as __durolabCreateRequire } from 'node:module'; const require = __durolabCreateRequire(import.meta.url);";

const packageOf = (spec: string): string => {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
};
const isBuiltin = (spec: string): boolean => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!);

async function listFiles(dir: string, out: string[]): Promise<void> {
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await listFiles(p, out);
    else out.push(p);
  }
}

/** The package and what it depends on (dependencies + installed optionalDependencies, e.g. platform binaries). */
async function packageClosure(root: string, names: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    const dir = path.join(root, 'node_modules', name);
    const pkgJson = path.join(dir, 'package.json');
    if (!existsSync(pkgJson)) {
      if (names.includes(name)) throw new Error(`guest bundle: package ${name} is not installed in ${path.join(root, 'node_modules')} (run npm ci)`);
      continue; // an optional dependency for another platform
    }
    seen.add(name);
    const pkg = JSON.parse(readFileSync(pkgJson, 'utf8')) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    queue.push(...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {}));
  }
  return [...seen].sort();
}

export interface GuestBundleOptions {
  root: string;
  /** The CLI entry; null leaves the CLI out (the guest tools are always built). */
  cliEntry: string | null;
}

export async function buildGuestBundle(opts: GuestBundleOptions): Promise<GuestBundle> {
  const { build } = await import('esbuild');
  const outdir = path.join(opts.root, 'durolab-guest-bundle'); // virtual: write is false
  const toolsDir = path.join(opts.root, 'harness/vm/guest');
  const entries: Array<{ what: string; points: Record<string, string> }> = [
    {
      what: 'the guest tools (harness/vm/guest/*.ts)',
      points: {
        'vm-agent': path.join(toolsDir, 'agent.ts'),
        'vm-append-workload': path.join(toolsDir, 'append-workload.ts'),
        'vm-deps-check': path.join(toolsDir, 'deps-check.ts'),
        'vm-broker-zygote': path.join(toolsDir, 'broker-zygote.ts'),
      },
    },
  ];
  if (opts.cliEntry) entries.push({ what: `the durolab CLI (${path.relative(opts.root, opts.cliEntry)})`, points: { durolab: opts.cliEntry } });

  const files: BundleFile[] = [];
  const natives = new Set<string>();
  for (const entry of entries) {
    let result;
    try {
      result = await build({
        entryPoints: entry.points,
        outdir,
        outExtension: { '.js': '.mjs' },
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        external: [...NATIVE_PACKAGES, ...HOST_ONLY_PACKAGES],
        banner: { js: BANNER },
        metafile: true,
        write: false,
        logLevel: 'silent',
        legalComments: 'none',
      });
    } catch (err) {
      const errors = (err as { errors?: Array<{ text: string; location?: { file: string; line: number } | null }> }).errors;
      const detail = errors?.length
        ? errors.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ''}${e.text}`).join('; ')
        : (err as Error).message;
      throw new Error(`vm-image: bundling ${entry.what} for the guest failed: ${detail}`);
    }
    for (const [outPath, out] of Object.entries(result.metafile.outputs)) {
      for (const imp of out.imports) {
        if (!imp.external || isBuiltin(imp.path)) continue;
        const pkg = packageOf(imp.path);
        if (HOST_ONLY_PACKAGES.includes(pkg)) {
          if (imp.kind !== 'dynamic-import') {
            throw new Error(`vm-image: ${path.basename(outPath)} imports host-only package ${pkg} statically (${imp.kind}); import it with await import() so the guest bundle can load without it`);
          }
          continue;
        }
        // Anything else esbuild left external was unresolvable inside a try/catch (e.g. vega's
        // optional `canvas`): copied when installed, skipped otherwise, as at runtime on the host.
        if (NATIVE_PACKAGES.includes(pkg) || existsSync(path.join(opts.root, 'node_modules', pkg, 'package.json'))) natives.add(pkg);
      }
    }
    for (const f of result.outputFiles) {
      if (f.path.endsWith('.mjs')) files.push({ rel: `durolab/dist/${path.relative(outdir, f.path)}`, data: Buffer.from(f.contents) });
    }
  }
  // Native packages are copied even when loaded lazily (createRequire, unseen by esbuild): the
  // CRC fallback needs @node-rs/crc32 where the crc32c addon is missing.
  for (const p of NATIVE_PACKAGES) natives.add(p);
  // The deps check imports what the CLI imports natively; copy those even when the CLI is left out.
  const packages = await packageClosure(opts.root, [...natives].sort());
  const nodeModules: CopiedFile[] = [];
  for (const pkg of packages) {
    const dir = path.join(opts.root, 'node_modules', pkg);
    const all: string[] = [];
    await listFiles(dir, all);
    for (const src of all.sort()) nodeModules.push({ rel: `durolab/node_modules/${pkg}/${path.relative(dir, src)}`, src });
  }
  files.sort((a, b) => a.rel.localeCompare(b.rel));
  return { files, nodeModules, packages };
}
