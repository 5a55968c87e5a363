// What a published page or run.json must not carry: the checkout path, the data directory,
// temporary and home paths, and the host's name. Every string of the run is rewritten; the
// environment's hostname and data directory are replaced outright.

import os from 'node:os';
import path from 'node:path';
import type { RunResult } from '../results/types.ts';

export const REDACTED_HOST = '(host name not published)';
export const REDACTED_DIR = '(local path)';

export interface RedactionContext {
  /** The checkout (repository root). */
  repoRoot: string;
  /** Other absolute prefixes to hide, e.g. the results folder. */
  extraPaths?: string[];
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A function that rewrites one string: known local paths (and what follows them up to a space or quote) and the host name. */
export function redactor(run: RunResult, ctx: RedactionContext): (s: string) => string {
  const prefixes = [run.environment.dataDir, ctx.repoRoot, ...(ctx.extraPaths ?? []), os.tmpdir(), os.homedir()]
    .filter((p) => typeof p === 'string' && path.isAbsolute(p) && p.length > 1)
    .map((p) => p.replace(/\/+$/, ''))
    .sort((a, b) => b.length - a.length);
  const pathRe = prefixes.length ? new RegExp(`(?:${prefixes.map(escapeRegex).join('|')})(?:/[^\\s'"\`<>(),;]*)?`, 'g') : null;
  const host = run.environment.hostname;
  // A short host name ("vm") is also an ordinary word: only the field itself is replaced then.
  const hostRe = host && host.length >= 4 ? new RegExp(`(?<![\\w.-])${escapeRegex(host)}(?![\\w-])`, 'g') : null;
  return (s: string) => {
    let out = pathRe ? s.replace(pathRe, REDACTED_DIR) : s;
    if (hostRe) out = out.replace(hostRe, REDACTED_HOST);
    return out;
  };
}

function deepMap(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => deepMap(v, f));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, deepMap(v, f)]));
  }
  return value;
}

/** A copy of the run fit for publishing: no local paths, no host name. */
export function redactRun(run: RunResult, ctx: RedactionContext): RunResult {
  const f = redactor(run, ctx);
  const copy = deepMap(run, f) as RunResult;
  copy.environment = { ...copy.environment, hostname: REDACTED_HOST, dataDir: REDACTED_DIR };
  if (path.isAbsolute(run.scenario.file)) copy.scenario = { ...copy.scenario, file: path.basename(run.scenario.file) };
  return copy;
}
