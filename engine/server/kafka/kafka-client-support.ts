// Test support for the Kafka listener tests (not product code): raw frames over a socket, kcat
// runs, and a kafkajs client, so tests speak to a live broker as real clients do.
import net from 'node:net';
import { createRequire } from 'node:module';
import { execa } from 'execa';
import { encodeRequest, decodeResponse } from '../../protocol/frame.ts';
import { apiSpec, API_KEYS, type ApiName } from '../../protocol/messages.ts';
import type { Struct } from '../../protocol/schema.ts';

const require = createRequire(import.meta.url);
export const kafkajs = require('kafkajs') as typeof import('kafkajs');

export interface RawAnswer {
  /** Response frames (size prefix removed), in arrival order. */
  frames: Buffer[];
  /** The broker closed the connection. */
  closed: boolean;
}

/** Writes bytes and collects answers until `expectFrames` arrived, the broker closed, or the wait ended. */
export function rawExchange(address: string, bytes: Buffer, expectFrames: number, waitMs = 3000): Promise<RawAnswer> {
  const i = address.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(address.slice(i + 1)), address.slice(0, i));
    let buf = Buffer.alloc(0);
    const frames: Buffer[] = [];
    let settled = false;
    const done = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ frames, closed });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const n = buf.readInt32BE(0);
        frames.push(buf.subarray(4, 4 + n));
        buf = buf.subarray(4 + n);
      }
      if (frames.length >= expectFrames) done(false);
    });
    socket.on('end', () => done(true));
    socket.on('close', () => done(true));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') done(true);
      else if (!settled) reject(err);
    });
  });
}

export function request(name: ApiName, version: number, correlationId: number, body: Struct): Buffer {
  return encodeRequest(apiSpec(API_KEYS[name])!, version, correlationId, 'durolab-test', body);
}

export function response(name: ApiName, version: number, frame: Buffer): { correlationId: number; body: Struct } {
  return decodeResponse(apiSpec(API_KEYS[name])!, version, frame);
}

/** One request, one answer (throws when the broker closed instead). */
export async function call(address: string, name: ApiName, version: number, body: Struct): Promise<Struct> {
  const a = await rawExchange(address, request(name, version, 1, body), 1);
  if (a.frames.length !== 1) throw new Error(`${name} v${version} to ${address}: ${a.closed ? 'connection closed' : 'no answer'}`);
  return response(name, version, a.frames[0]).body;
}

/** kcat must exist; under CI=true as everywhere else a missing kcat is a failure with its reason. */
export async function requireKcat(): Promise<void> {
  const r = await execa('kcat', ['-V'], { reject: false });
  if (r.exitCode !== 0) throw new Error(`kcat is not installed (${r.stderr || r.message}): run scripts/install-system-deps.sh (Debian package kcat)`);
}

export interface KcatMessage {
  partition: number;
  offset: number;
  key: string | null;
  payload: string | null;
}

/** Consumes a partition from the beginning to its end (-e), assigned directly (no group). */
export async function kcatConsume(bootstrap: string, topic: string, partition: number): Promise<KcatMessage[]> {
  const r = await execa('kcat', ['-b', bootstrap, '-C', '-t', topic, '-p', String(partition), '-o', 'beginning', '-e', '-q', '-J'], { timeout: 60_000, reject: false });
  if (r.exitCode !== 0) throw new Error(`kcat -C ${topic}-${partition} exited ${r.exitCode}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as KcatMessage);
}

/** Produces one message per line with acks=all; resolves once kcat has every delivery report. */
export async function kcatProduce(bootstrap: string, topic: string, partition: number, lines: string[], extra: string[] = []): Promise<void> {
  const r = await execa('kcat', ['-b', bootstrap, '-P', '-t', topic, '-p', String(partition), '-X', 'acks=all', '-X', 'linger.ms=5', ...extra], {
    input: `${lines.join('\n')}\n`,
    timeout: 60_000,
    reject: false,
  });
  if (r.exitCode !== 0) throw new Error(`kcat -P ${topic}-${partition} exited ${r.exitCode}: ${r.stderr}`);
}

export async function kcatMetadata(bootstrap: string): Promise<{
  brokers: Array<{ id: number; name: string }>;
  topics: Array<{ topic: string; partitions: Array<{ partition: number; leader: number; replicas: Array<{ id: number }>; isrs: Array<{ id: number }> }> }>;
}> {
  const r = await execa('kcat', ['-b', bootstrap, '-L', '-J'], { timeout: 30_000, reject: false });
  if (r.exitCode !== 0) throw new Error(`kcat -L exited ${r.exitCode}: ${r.stderr}`);
  return JSON.parse(r.stdout) as never;
}
