// The errno error Node's own fs calls throw (code, errno, syscall; "EIO: i/o error, write"),
// made from a negative errno an addon returned, optionally prefixed with what was being done.
import util from 'node:util';

export function errnoException(negErrno: number, syscall: string, context?: string): NodeJS.ErrnoException {
  const errno = -Math.abs(negErrno);
  const [code, text] = util.getSystemErrorMap().get(errno) ?? [`Unknown system error ${errno}`, 'unknown error'];
  return Object.assign(new Error(`${context ? `${context}: ` : ''}${code}: ${text}, ${syscall}`), { errno, code, syscall });
}
