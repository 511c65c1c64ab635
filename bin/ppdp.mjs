#!/usr/bin/env node
// The ppdp command: runs the bundled CLI that `npm install` (prepare → build) produces.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/ppdp.mjs', import.meta.url);
if (!existsSync(dist)) {
  process.stderr.write(
    'ppdp: not built yet. Run `npm install` (or `npm run build`) in the ppdp folder first.\n',
  );
  process.exit(1);
}
const { main } = await import(dist.href);
process.exitCode = await main(process.argv.slice(2));
