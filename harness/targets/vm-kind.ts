// The target registry's row for target `vm`: durolab's broker, each in its own QEMU VM.
import { settingDefault } from '../../engine/settings/index.ts';
import type { TargetKindSpec } from './target-kind.ts';

export const VM_KIND: TargetKindSpec = {
  summary: 'each broker in its own QEMU VM with its own ext4 disk',
  system: 'durolab',
  install: '`make vm-image` (the guest kernel, a busybox initramfs, node and the bundled CLI; qemu-system-x86_64 from the Debian packages of `make system-deps`)',
  systemLabel: "durolab's broker",
  capabilities: {
    // record-write-log: QEMU's blklogwrites (or the NBD disk) records every request to the data disk.
    faultActions: ['kill-broker-process', 'cut-power', 'record-write-log'],
    lacksFaultAction: {
      'fail-disk-reads': "where a file's blocks lie on the guest's disk is known only inside the guest (its ext4): the guest agent has no command to report a file's extents",
      'change-data-files': "its brokers' data dirs are ext4 inside QEMU guests: a file fault would go through the guest agent, which has no command to change a file's bytes (targets process, kafka and nats change their host data dirs)",
      'fill-disk': "its brokers' disks are ext4 inside QEMU guests, mounted by the guest: a filler would have to be written by the guest agent, which has no such command (targets process and kafka fill their host fault disk)",
    },
    sysctls: 'guest',
    recoveryTimeoutMs: 120_000,
    dataOnHost: false,
    guestProbes: true,
    watchFigures: false,
    vmOptions: true,
    faultDisk: 'guest',
    // Closed-loop bound of a guest's virtio disk over the harness's NBD server: half the host route's (one
    // guest vCPU runs the broker and its page-cache writeback); an assumed bound, not measured here.
    closedLoopDiskMBps: 40,
    drivers: ['http'],
    hostProcesses: false,
    // Runs that recorded no disk model ran on the file disk (harness/vm/disk.ts; results/disk-models.ts DEFAULT_VM_DISK_MODEL,
    // not imported: that module reads this registry).
    defaultDiskModel: 'virtio-blk-file-writeback',
    fetchLimit: settingDefault<number>('fetch.max.bytes'),
    baseSettings: {},
    refuseLabNetwork: 'its brokers are QEMU guests on user-mode networking, reached through host forwards; the lab network puts host processes in namespaces',
  },
  load: async ({ scenario, log }) => {
    const { vmTarget, diskVariesByCell } = await import('./vm-target.ts');
    return vmTarget({ vm: scenario.vm, diskVariesByCell: diskVariesByCell(scenario.matrix ?? [], scenario.settings ?? {}), log: (line) => log(`[vm] ${line}`) });
  },
  notInMainSuite: 'its brokers are QEMU guests on a built VM image: the VM suite (vitest.vm.config.ts, *.vm.test.ts) starts them',
  sideBench: {
    driver: 'http',
    // Its own virtio disk, recorded by QEMU's blklogwrites: the bench's disk spec is the guest's default.
    load: async ({ log, disk }) => (await import('./vm-target.ts')).vmTarget({ vm: { accelerator: 'auto', memoryMiB: 640, diskMiB: disk?.diskMiB ?? 256, mountOptions: '' }, log }),
    describe: (s) => `io=${s.io}`,
    benches: { 'crash-states': { checkedBy: "durolab's recovery", perMinBar: 300 } },
  },
};
