import { describe, expect, test } from 'vitest';
import { renderInstallScript } from './render-install-script.js';

const SCRIPT =
  '#!/bin/sh\nset -eu\nDEFAULT_COORDINATOR="http://127.0.0.1:8080"\necho "$DEFAULT_COORDINATOR"\n';

describe('renderInstallScript', () => {
  test('default', () => {
    expect(renderInstallScript(SCRIPT, 'https://mesh.example.org:8443')).toBe(
      '#!/bin/sh\nset -eu\nDEFAULT_COORDINATOR="https://mesh.example.org:8443"\necho "$DEFAULT_COORDINATOR"\n',
    );
  });

  test('behavior: readonly and _URL forms are filled in too', () => {
    expect(renderInstallScript('readonly DEFAULT_COORDINATOR_URL=x\n', 'http://a:1')).toBe(
      'readonly DEFAULT_COORDINATOR_URL="http://a:1"\n',
    );
  });

  test('error: a URL that could break out of the shell string', () => {
    for (const url of ['http://a/$(reboot)', 'http://a/"x', 'http://a/`id`', 'http://a b', 'file:///etc']) {
      expect(() => renderInstallScript(SCRIPT, url)).toThrow(/not shell-safe/);
    }
  });

  test('error: no default-coordinator line', () => {
    expect(() => renderInstallScript('#!/bin/sh\necho hi\n', 'http://a:1')).toThrow(/DEFAULT_COORDINATOR/);
  });
});
