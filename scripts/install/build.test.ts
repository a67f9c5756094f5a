import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { buildInstallScript, INSTALL_SH } from './build.js';

test('default: the committed install.sh is the one its parts make (npm run install-sh writes it)', () => {
  expect(readFileSync(INSTALL_SH, 'utf8')).toBe(buildInstallScript());
});
