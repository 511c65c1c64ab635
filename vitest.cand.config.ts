import { defineConfig, mergeConfig } from 'vitest/config';
import base from '/work/main/vitest.config.ts';
export default mergeConfig(
  base,
  defineConfig({
    test: {
      reporters: ['default', ['json', { outputFile: '/tmp/vt-cand.json' }]],
      exclude: [
        'test/e2e/**',
        'test/trust/**',
        'test/arx/**',
        '**/*browser*.test.ts',
        'test/infra/synth.test.ts',
        '**/node_modules/**',
      ],
    },
  }),
);
