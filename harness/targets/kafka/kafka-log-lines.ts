// Apache Kafka's lines for a failed log dir, as its broker logs them (log4j pattern
// `[%d] %p %m (%c)%n`, kafka-node.ts): LogDirFailureChannel's ERROR ("Error while appending
// records to t-0 in dir /d", "Error while writing to checkpoint file /d/...", "Error while
// flushing log ...", each followed by the IOException: "No space left on device"), then
// LogManager's "Stopping serving logs in dir /d" and, the last log dir gone, "Shutdown broker
// because all log dirs in /d have failed". The errno is taken from the exception's text.
import type { StorageFailureLines } from '../broker-log-failures.ts';

const HEAD = /^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3})\] (\w+) (.*)$/;
const FAILURE = /LogDirFailureChannel|Stopping serving logs in dir|Stopping serving replicas in dir|all log dirs in .* have failed/;
/** Java's IOException texts for the errnos a disk gives (the JDK passes strerror through). */
const ERRNO_TEXTS: Array<[RegExp, string]> = [
  [/No space left on device/, 'ENOSPC'],
  [/Input\/output error/, 'EIO'],
  [/Read-only file system/, 'EROFS'],
  [/Disk quota exceeded/, 'EDQUOT'],
];

function fileOf(message: string): string {
  return /(?:file|dir|dirs in) (\S+)/.exec(message)?.[1] ?? 'unknown';
}

export const kafkaStorageFailureLines: StorageFailureLines = (text) => {
  const out: ReturnType<StorageFailureLines> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = HEAD.exec(lines[i]!);
    if (!m || !FAILURE.test(m[9]!)) continue;
    // The exception and its stack follow on lines that do not start with a timestamp.
    let tail = '';
    for (let j = i + 1; j < lines.length && !HEAD.test(lines[j]!); j++) tail += `${lines[j]}\n`;
    const errno = ERRNO_TEXTS.find(([re]) => re.test(m[9]!) || re.test(tail))?.[1] ?? null;
    const [y, mo, d, h, mi, s, ms] = m.slice(1, 8).map(Number) as [number, number, number, number, number, number, number];
    out.push({ errno, file: fileOf(m[9]!), atMs: new Date(y, mo - 1, d, h, mi, s, ms).getTime(), line: lines[i]!.trim() });
  }
  return out;
};
