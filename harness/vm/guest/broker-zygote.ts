// A broker process started before its command line is known: it loads the broker's code,
// compiles its latency summaries, runs a throwaway broker once (broker-warmup.ts), says "ready"
// and the warm-up's outcome on fd 3, then waits for one JSON line on stdin
// (the arguments after `durolab broker`) and runs the broker with them. The agent starts one
// when the host asks (POST /v1/broker-zygote), before a guest is saved as a template
// (harness/vm/vm-template.ts), so every guest resumed from it starts its broker without paying
// node's start and the code load again (~2 s of a TCG guest's broker start).
//
// Runs in the guest as `node /durolab/dist/vm-broker-zygote.mjs`, the agent's child.
import fs from 'node:fs';
import { warmLatencySummaries } from '../../../engine/common/latency.ts';
import { main } from '../../../engine/server/broker-command.ts';
import { warmUpBroker } from './broker-warmup.ts';

warmLatencySummaries();
// A throwaway broker runs the start, produce and read paths once (broker-warmup.ts). Its
// outcome goes on fd 3 with "ready": the agent hands it to the host, which logs it.
const warm = await warmUpBroker();
fs.writeSync(3, `ready ${JSON.stringify(warm)}\n`);
fs.closeSync(3);

let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  text += chunk;
  const nl = text.indexOf('\n');
  if (nl < 0) return;
  process.stdin.destroy();
  let args: unknown;
  try {
    args = JSON.parse(text.slice(0, nl));
  } catch {
    args = undefined;
  }
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
    console.error(`durolab broker zygote: expected a JSON array of strings on stdin, got ${text.slice(0, nl).slice(0, 200)}`);
    process.exitCode = 2;
    return;
  }
  main(args).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(`durolab: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
});
