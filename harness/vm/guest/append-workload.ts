// Guest workload for power-cut trials and smoke tests: appends fixed-size records to one file
// (buffered, or with fdatasync/fsync every N records, or O_DSYNC) and acknowledges them to
// the host over HTTP. An acknowledgement is cumulative ("records 0..count-1 are written and,
// per the sync mode, synced"), sent by a loop that never waits for the writer, so a slow
// guest->host path lowers the ack count but never inflates it.
//
// Runs in the guest under `node /durolab/dist/vm-append-workload.mjs`; no npm packages.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseFlags } from '../../../engine/common/flags.ts';
import { fillRecord, MIN_RECORD_BYTES } from '../append-log.ts';

const HELP = `usage: vm-append-workload --file PATH [options]
  --file PATH            file to append to (created; the file and its directory are fsynced once before the first record)
  --record-bytes N       record size (default 4096, >= ${MIN_RECORD_BYTES})
  --sync MODE            none | fdatasync | fsync | dsync (O_DSYNC)   (default none)
  --sync-every N         sync after every N records (default 1)
  --ack-url URL          POST cumulative acks here (JSON {count, tGuestMs, pid}); omit to not ack
  --ack-interval-ms N    at most one ack per N ms (default 20): each ack costs guest CPU, scarce under TCG
  --max-records N        stop after N records (default 0 = until killed)
  --rate N               records per second (default 0 = as fast as possible)`;

type SyncMode = 'none' | 'fdatasync' | 'fsync' | 'dsync';

function intArg(name: string, v: string | undefined, def: number, min: number): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: expected an integer >= ${min}, got '${v}'`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseFlags('vm-append-workload', process.argv.slice(2), {
    file: { type: 'string' },
    'record-bytes': { type: 'string' },
    sync: { type: 'string' },
    'sync-every': { type: 'string' },
    'ack-url': { type: 'string' },
    'max-records': { type: 'string' },
    'ack-interval-ms': { type: 'string' },
    rate: { type: 'string' },
    help: { type: 'boolean' },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.file) throw new Error(`--file is required\n${HELP}`);
  const recordBytes = intArg('record-bytes', values['record-bytes'], 4096, MIN_RECORD_BYTES);
  const syncEvery = intArg('sync-every', values['sync-every'], 1, 1);
  const maxRecords = intArg('max-records', values['max-records'], 0, 0);
  const rate = intArg('rate', values.rate, 0, 0);
  const ackIntervalMs = intArg('ack-interval-ms', values['ack-interval-ms'], 20, 0);
  const sync = (values.sync ?? 'none') as SyncMode;
  if (!['none', 'fdatasync', 'fsync', 'dsync'].includes(sync)) throw new Error(`--sync: expected none|fdatasync|fsync|dsync, got '${sync}'`);

  const file = values.file;
  let flags = fs.constants.O_CREAT | fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_TRUNC;
  if (sync === 'dsync') flags |= fs.constants.O_DSYNC;
  const fd = fs.openSync(file, flags, 0o644);
  // The file itself must exist after a cut: what a trial measures is lost records, not a lost create.
  fs.fsyncSync(fd);
  const dirFd = fs.openSync(path.dirname(file), 'r');
  fs.fsyncSync(dirFd);
  fs.closeSync(dirFd);

  let written = 0; // records written (and synced per the mode)
  let acked = 0; // count the host has confirmed receiving
  let stopping = false;
  let failure: string | undefined;

  const ackUrl = values['ack-url'] ? new URL(values['ack-url']) : undefined;
  // One kept-alive connection: through QEMU's guestfwd every new connection spawns a host process.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const postAck = (body: object): Promise<void> =>
    new Promise((resolve, reject) => {
      const data = Buffer.from(JSON.stringify(body));
      const req = http.request(
        ackUrl!,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': data.length }, timeout: 5000 },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 || res.statusCode === 204 ? resolve() : reject(new Error(`ack: HTTP ${res.statusCode}`))));
        },
      );
      req.on('timeout', () => req.destroy(new Error('ack: timeout')));
      req.on('error', reject);
      req.end(data);
    });

  let wake: (() => void) | undefined;
  const ackLoop = async (): Promise<void> => {
    if (!ackUrl) return;
    while (true) {
      if (written > acked) {
        const count = written;
        const sentAt = performance.now();
        try {
          await postAck({ count, tGuestMs: Date.now(), pid: process.pid });
          acked = count;
          const rest = ackIntervalMs - (performance.now() - sentAt);
          if (rest > 0 && !stopping) await new Promise((r) => setTimeout(r, rest));
        } catch (err) {
          console.error(`append-workload: ${(err as Error).message}; retrying`);
          await new Promise((r) => setTimeout(r, 50));
        }
        continue;
      }
      if (stopping) return;
      await new Promise<void>((r) => (wake = r));
    }
  };
  const acking = ackLoop();

  process.on('SIGTERM', () => {
    stopping = true;
  });

  const rec = Buffer.alloc(recordBytes);
  const t0 = performance.now();
  console.log(`append-workload: ready file=${file} recordBytes=${recordBytes} sync=${sync} every=${syncEvery} pid=${process.pid}`);
  let sliceStart = performance.now();
  try {
    while (!stopping && (maxRecords === 0 || written < maxRecords)) {
      if (rate > 0) {
        const due = t0 + (written / rate) * 1000;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      }
      fillRecord(rec, written);
      let off = 0;
      while (off < rec.length) off += fs.writeSync(fd, rec, off, rec.length - off);
      if ((written + 1) % syncEvery === 0) {
        if (sync === 'fdatasync') fs.fdatasyncSync(fd);
        else if (sync === 'fsync') fs.fsyncSync(fd);
      }
      written++;
      wake?.();
      wake = undefined;
      // Give the ack loop its turn: the writer is synchronous so the event loop must be let in.
      if (performance.now() - sliceStart > 2) {
        await new Promise((r) => setImmediate(r));
        sliceStart = performance.now();
      }
    }
  } catch (err) {
    failure = `${(err as NodeJS.ErrnoException).code ?? ''} ${(err as Error).message}`.trim();
  }
  stopping = true;
  wake?.();
  await acking;
  agent.destroy();
  const secs = (performance.now() - t0) / 1000;
  // Deliberately no fsync/close-time sync here: what was not synced per the mode stays unsynced.
  console.log(`append-workload: ${failure ? `FAILED after` : 'done,'} ${written} records in ${secs.toFixed(2)} s, ${acked} acked${failure ? `: ${failure}` : ''}`);
  return failure ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`append-workload: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
