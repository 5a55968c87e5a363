// `durolab disk-server`: one NBD fault disk (nbd-disk.ts) in a process of its own, for the host
// route (host-disk.ts). The kernel's requests for a host mount come back to this server, so it
// cannot share an event loop with anything that touches the mount synchronously (the harness
// stats, reads and removes files there): in one process such a call would wait on a request
// the same thread has to serve. The harness starts it, reads one ready line, then talks JSON
// lines on stdin/stdout:
//   {"id":1,"op":"cut"}            -> {"id":1,"ok":true,"result":CutOutcome}
//   {"id":2,"op":"cleanShutdown"}  -> the drive writes back its cache
//   {"id":3,"op":"report"}         -> NbdDiskReport and summaryLine
//   {"id":4,"op":"close"}          -> closes the server and exits 0
// It exits when stdin closes (its harness is gone) and runs under pdeathsig besides.
// Its write log is stamped on the harness's host clock: it adopts the harness's clock offset
// (config clockOffsetUs) before the disk exists, so crash states compare those stamps with the
// ack ledger's times with no offset between two processes in between (engine/common/clock.ts).
import type { ReadErrorRange } from './disk-faults.ts';
import { adoptHostClockOffset } from '../../engine/common/clock.ts';
import { NbdDisk, type NbdDiskOptions } from './nbd-disk.ts';

export interface DiskServerConfig {
  file: string;
  sizeMiB: number;
  spec: NbdDiskOptions['spec'];
  seed: number;
  writeLogPath: string | null;
  /** Serve the file as it is (a crash state's image): no mkfs. */
  existing?: boolean;
  /**
   * The harness's hostClockOffsetUs (DiskServerProcess.start sends it), adopted before anything
   * is stamped. null: the server keeps the offset it derived itself (only the clock-skew test's
   * "before", harness/disk/clock-skew.test.ts).
   */
  clockOffsetUs: number | null;
}

export interface DiskServerReady {
  ready: true;
  socketPath: string;
  exportName: string;
  describe: string;
}

const USAGE = 'usage: durolab disk-server --config JSON (started by the harness: host-disk.ts; not a user command)';

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--help' || argv[0] === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv[0] !== '--config' || argv[1] === undefined || argv.length !== 2) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let config: DiskServerConfig;
  try {
    config = JSON.parse(argv[1]) as DiskServerConfig;
  } catch (err) {
    process.stderr.write(`disk-server --config: expected JSON, ${(err as Error).message}\n`);
    return 2;
  }
  if (config.clockOffsetUs !== null) {
    if (!Number.isSafeInteger(config.clockOffsetUs)) {
      process.stderr.write(`disk-server --config: clockOffsetUs: expected the harness's host clock offset (integer µs) or null, got ${JSON.stringify(config.clockOffsetUs)}\n`);
      return 2;
    }
    adoptHostClockOffset(config.clockOffsetUs);
  }
  const disk = await NbdDisk.create({
    file: config.file,
    sizeMiB: config.sizeMiB,
    spec: config.spec,
    seed: config.seed,
    writeLogPath: config.writeLogPath,
    overNbd: true,
    ...(config.existing ? { existing: true } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const send = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
  const ready: DiskServerReady = { ready: true, socketPath: disk.socketPath, exportName: disk.server.exportName, describe: disk.describe() };
  send(ready);
  return new Promise<number>((resolve) => {
    let buf = '';
    let queue = Promise.resolve();
    const finish = async (code: number): Promise<void> => {
      await disk.close().catch((e: Error) => process.stderr.write(`disk-server: close: ${e.message}\n`));
      resolve(code);
    };
    process.stdin.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        queue = queue.then(async () => {
          let req: { id?: number; op?: string; ranges?: Array<Pick<ReadErrorRange, 'from' | 'to' | 'mode'>> };
          try {
            req = JSON.parse(line) as typeof req;
          } catch {
            send({ ok: false, error: `not JSON: ${line.slice(0, 80)}` });
            return;
          }
          try {
            if (req.op === 'cut') send({ id: req.id, ok: true, result: await disk.afterPowerCut() });
            else if (req.op === 'cleanShutdown') {
              await disk.afterCleanShutdown();
              send({ id: req.id, ok: true });
            } else if (req.op === 'report') send({ id: req.id, ok: true, result: { report: disk.report(), summary: disk.summaryLine(), writeLogFull: disk.server.writeLogFull?.message ?? null } });
            else if (req.op === 'readErrors') send({ id: req.id, ok: true, result: disk.faults.setReadErrors(req.ranges ?? []) });
            else if (req.op === 'readErrorHits') send({ id: req.id, ok: true, result: disk.faults.readErrorHits() });
            else if (req.op === 'close') {
              await disk.close();
              send({ id: req.id, ok: true });
              resolve(0);
            } else send({ id: req.id, ok: false, error: `unknown op ${JSON.stringify(req.op)} (cut | cleanShutdown | report | readErrors | readErrorHits | close)` });
          } catch (err) {
            send({ id: req.id, ok: false, error: (err as Error).message });
          }
        });
      }
    });
    process.stdin.on('end', () => void queue.then(() => finish(0)));
  });
}
