// The VM target: images, QEMU VMs with a guest agent, data disks, offline inspection.
export { buildVmImage, type VmImage, type BuildVmImageOptions } from './image.ts';
export { checkVmPrerequisites, APT_INSTALL } from './prerequisites.ts';
export { Vm, type VmOptions, type BootReport, type ProbeResult, type PowerCutReport, type GuestProcess, type SetupResult } from './vm.ts';
export { type Accel, type HostForward, type GuestForward } from './qemu-args.ts';
export { createFileDisk, FileDisk, sparseCopy, type DataDisk } from './disk.ts';
export { readFileFromDisk, listDir, DiskSnapshot, GuestFileNotFoundError, pathOnDisk, type DirEntry } from './inspect.ts';
export { ensureNoOrphans, trackedQemuPids, findQemusMatching, QEMU_MARKER } from './process-registry.ts';
export { GUEST_DATA_MOUNT, GUEST_IP } from './init-script.ts';
export { startAckCollector, type AckCollector, type AckState } from './ack-collector.ts';
export { checkAppendLog, fillRecord, type AppendLogCheck } from './append-log.ts';

/** Guest paths of the programs in the image. */
export const GUEST_CLI = '/durolab/dist/durolab.mjs';
export const GUEST_APPEND_WORKLOAD = '/durolab/dist/vm-append-workload.mjs';
export const GUEST_DEPS_CHECK = '/durolab/dist/vm-deps-check.mjs';
export { prepareVmTemplate, templateKey, templatePath, templateSpecOf } from './vm-template.ts';
