import { cp, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The checkout's package folders without dist/, beside what their build reads, in `into`: packing
 * there (prepack builds dist/) neither depends on nor rewrites the checkout's dist/, which other
 * tests pack at the same time.
 */
export async function copyCheckout(into: string, packages: readonly string[]): Promise<void> {
  for (const name of packages) {
    await cp(join(ROOT, name), join(into, name), {
      recursive: true,
      filter: (source) => !/[/\\](dist|node_modules)$/.test(source),
    });
  }
  await mkdir(join(into, 'scripts'), { recursive: true });
  for (const script of ['build-package.mjs', 'pack-node-packages.mjs'])
    await cp(join(ROOT, 'scripts', script), join(into, 'scripts', script));
  for (const file of ['tsconfig.base.json', 'install.sh']) await cp(join(ROOT, file), join(into, file));
  // tsc and the type packages the build needs: the checkout's own.
  await symlink(join(ROOT, 'node_modules'), join(into, 'node_modules'), 'dir');
}
