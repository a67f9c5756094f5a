import type { NodeConfig } from '../config.js';
import type { CommandInput } from './parse-args.js';

/** `gpumesh-node doctor`: each check, and a fix for each that fails; exit 1 when one fails. */
export async function doctor(config: NodeConfig, { values }: CommandInput): Promise<number> {
  const { runDoctor } = await import('../doctor.js');
  const checks = await runDoctor(config);
  const ok = checks.every((check) => check.ok);
  if (values.json) {
    console.log(JSON.stringify({ ok, checks }));
    return ok ? 0 : 1;
  }
  for (const check of checks) {
    console.log(
      `${check.ok ? 'ok  ' : 'FAIL'}  ${check.name}: ${check.detail}${check.ok ? '' : `\n      fix: ${check.fix}`}`,
    );
  }
  return ok ? 0 : 1;
}
