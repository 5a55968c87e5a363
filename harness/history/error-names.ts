// Every error name a cell's `errors` can hold, listed once: what `errors.<NAME>` in an
// expectation may name (anything else is refused at `scenario check`).
//
// - Kafka's error names the broker answers with (engine/replication/errors.ts);
// - names the harness gives to what is not a broker answer: CLIENT_<errno> for a request that
//   failed on the client side (autocannon's reqError: refused or reset connections, timeouts),
//   HTTP_<status> for an answer without a JSON error body, UNKNOWN_PRODUCER_IN_ANSWER for an
//   answer naming a producer the workload never used.
import { ERROR_STATUS } from '../../engine/replication/errors.ts';

export const KAFKA_ERROR_NAMES: readonly string[] = Object.keys(ERROR_STATUS);

/** CLIENT_ + the errno code Node gives a failed HTTP request; TIMEOUT and ERROR when it has none. */
export const CLIENT_ERROR_NAMES: readonly string[] = [
  'CLIENT_TIMEOUT',
  'CLIENT_ERROR',
  'CLIENT_ECONNREFUSED',
  'CLIENT_ECONNRESET',
  'CLIENT_ECONNABORTED',
  'CLIENT_EPIPE',
  'CLIENT_ETIMEDOUT',
  'CLIENT_EHOSTUNREACH',
  'CLIENT_ENETUNREACH',
  'CLIENT_EADDRNOTAVAIL',
  'CLIENT_ERR_STREAM_DESTROYED',
];

export const HARNESS_ERROR_NAMES: readonly string[] = [...CLIENT_ERROR_NAMES, 'UNKNOWN_PRODUCER_IN_ANSWER'];

/** The one list: every error name an expectation may name exactly. */
export const KNOWN_ERROR_NAMES: readonly string[] = [...KAFKA_ERROR_NAMES, ...HARNESS_ERROR_NAMES];

/** HTTP_<status>: an error answer whose body was not the broker's JSON error. */
const HTTP_STATUS_NAME = /^HTTP_[1-5]\d\d$/;

export function isKnownErrorName(name: string): boolean {
  return KNOWN_ERROR_NAMES.includes(name) || HTTP_STATUS_NAME.test(name);
}

/** For messages: every known name, with the HTTP_<status> family last. */
export function knownErrorNamesText(): string {
  return [...KNOWN_ERROR_NAMES, 'HTTP_<status>'].join(', ');
}
