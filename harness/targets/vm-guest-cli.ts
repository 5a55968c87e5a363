// The CLI of the VM target's guest image (/durolab/dist/durolab.mjs): only `durolab broker`.
// The full CLI bundles the report stack (vega and friends, ~5.5 MB) into one file, and
// under TCG node spends ~4 s parsing it before the broker's first line; this entry is ~0.5 MB.
// Same command line as on the host: `node /durolab/dist/durolab.mjs broker --id N ...`.
import { main } from '../../engine/server/broker-command.ts';

const [command, ...rest] = process.argv.slice(2);
if (command !== 'broker') {
  console.error(`durolab (VM guest image): only the 'broker' command is bundled here, got '${command ?? ''}'`);
  process.exitCode = 2;
} else {
  main(rest).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(`durolab: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
