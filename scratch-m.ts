import { writeFileSync } from 'node:fs';
import { hospitalSpec } from './test/helpers/hospital.ts';
import { runRelease } from './src/pipeline/release.ts';
const variants: Record<string, any> = {
  anatomy: { name: 'anatomy' },
  slicing: { name: 'slicing', columns: 2 },
  randomization: { name: 'randomization', scenario: 'rr-s' },
  randomizationQi: { name: 'randomization', scenario: 'rr-both', discretize: { age: { level: 2 } } },
};
for (const [k, method] of Object.entries(variants)) {
  const s: any = hospitalSpec('generalization');
  s.method = method;
  if (k === 'anatomy' || k === 'slicing') s.privacy = [{ model: 'distinct-l-diversity', attribute: 'diagnosis', l: 3 }];
  if (k.startsWith('randomization')) s.privacy = [{ model: 'attribute-disclosure', attribute: 'diagnosis', tau: 0.5 }];
  writeFileSync(`/tmp/hosp/${k}.json`, JSON.stringify(s));
  try {
    const { report } = runRelease(`/tmp/hosp/${k}.json`, `/tmp/hosp/out-${k}-${Date.now()}`);
    console.log(k, report.verification.verified);
  } catch (e) { console.log(k, 'ERR', (e as any).code, (e as Error).message.slice(0, 300)); }
}
