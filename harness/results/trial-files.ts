// The files a trial keeps in its directory (cells/<cell>/rep-K/), named once.
/** The ack ledger, one batch a line (harness/history/ledger.ts toNdjson), written before the check starts. */
export const LEDGER_FILE = 'ledger.ndjson';
/** The check's outcome, written whatever it is (a failed check says what failed). */
export const CHECK_FILE = 'check.json';
/** The kept disk images and what they are (harness/disk/disk-evidence.ts DisksManifest). */
export const DISKS_FILE = 'disks.json';
