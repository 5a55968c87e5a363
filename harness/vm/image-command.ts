// `durolab vm-image [--force]`: builds (or finds cached) the VM image and prints where it is.
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { buildVmImage } from './image.ts';

const HELP = `usage: durolab vm-image [--force] [--cache-dir DIR] [--kernel auto|host|debian-package] [--json]

Builds the QEMU guest image (kernel + uncompressed initramfs with busybox, node, the bundled
durolab CLI and the guest agent), cached under vm/.cache/images/<hash> by a hash of its inputs.
Kernel: the host's /boot/vmlinuz-* when readable with its modules, else the Debian package
linux-image-cloud-amd64 (apt-get download + dpkg-deb -x, no install).
Needs: apt-get install -y qemu-system-x86 busybox-static e2fsprogs

  --force        rebuild even if the cache holds an image for the same inputs
  --cache-dir    cache directory (default vm/.cache or $DUROLAB_VM_CACHE)
  --kernel       where the kernel comes from (default auto)
  --json         print the image description as JSON`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('vm-image', argv, {
    force: { type: 'boolean', default: false },
    'cache-dir': { type: 'string' },
    kernel: { type: 'string', default: 'auto' },
    json: { type: 'boolean', default: false },
  }, HELP);
  if (parsed === null) return 0;
  const { values } = parsed;
  const kernel = values.kernel as 'auto' | 'host' | 'debian-package';
  if (!['auto', 'host', 'debian-package'].includes(kernel)) throw new Error(`--kernel: expected auto, host or debian-package, got '${values.kernel}'`);
  const t0 = performance.now();
  const image = await buildVmImage({
    force: values.force,
    kernel,
    ...(values['cache-dir'] ? { cacheDir: values['cache-dir'] } : {}),
    log: (s) => console.error(s),
  });
  if (values.json) {
    console.log(JSON.stringify(image, null, 2));
  } else {
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(`vm image ${image.hash} (${image.cached ? 'cached' : 'built'} in ${secs} s)`);
    console.log(`  kernel  ${image.kernel}  (${image.kernelVersion}, ${image.kernelSource}${image.kernelPackage ? ` ${image.kernelPackage}` : ''})`);
    console.log(`  initrd  ${image.initrd}  (${(image.initrdBytes / 2 ** 20).toFixed(0)} MiB uncompressed, node ${image.nodeVersion})`);
    console.log(`  modules ${image.modules.join(' ')}`);
    console.log(`  npm     ${image.packages.join(' ') || '(none)'}${image.hasCli ? '' : '   (no CLI bundle)'}`);
  }
  return 0;
}
