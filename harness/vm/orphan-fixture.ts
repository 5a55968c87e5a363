// Child process for vm-orphans.vm.test.ts: starts a VM and prints QEMU's PID as soon as it is
// spawned, then waits to be killed. Run with `node --import tsx harness/vm/orphan-fixture.ts WORKDIR`.
import path from 'node:path';
import { createFileDisk } from './disk.ts';
import { buildVmImage } from './image.ts';
import { trackedQemuPids } from './process-registry.ts';
import { Vm } from './vm.ts';

const workDir = process.argv[2];
if (!workDir) throw new Error('usage: orphan-fixture.ts WORKDIR');
const image = await buildVmImage({});
const disk = await createFileDisk(path.join(workDir, 'orphan.img'), 32);
const timer = setInterval(() => {
  const [pid] = trackedQemuPids();
  if (pid) {
    console.log(`QEMU_PID ${pid}`);
    clearInterval(timer);
  }
}, 20);
await Vm.start({ name: 'orphan', image, disk, hostfwd: [], workDir, agentPort: 7070, accel: 'tcg' });
console.log('BOOTED');
setInterval(() => {}, 1000);
