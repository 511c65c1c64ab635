/**
 * The per-value costs of the registry table's three ride-along columns (bench/registry-sample.ts,
 * RIDE_ALONG_COLUMNS) and of its coded columns, apart from a release: the scan's count of a
 * pass-through column's distinct values (DistinctHashes, shard by shard), Combine's count over
 * the shards' hashes (distinctHashCount, against one DistinctHashes of them all), Apply's split
 * of each shard's bytes into output parts (scatterRaw, against gathering each part's rows), the
 * readers' dictionary coding of the quasi-identifiers and the diagnosis (ByteDictionary), the
 * values' byte hashes every state above takes of such a column (bytesHashes: the WASM kernel
 * against its plain-TS reference, checked to agree), Assemble's shuffle of such a column
 * (gatherJoined: the WASM gatherBytes against its plain-TS reference, checked to agree), and,
 * given a release's output folder (`--out` of `ppdp release`), the audit of its staged parts.
 * CPU time (user + system) beside wall time, with the load average; results in
 * bench/results/ride-along-costs.json.
 *
 *   npm run bench:ride-along-costs -- --rows 1e6 [--dir DIR] [--release OUT] [--rounds 3]
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readArrow } from '../src/data/arrow.ts';
import { readCsv, readCsvShards } from '../src/data/csv.ts';
import { ByteDictionary } from '../src/data/dictionary.ts';
import { gatherJoined, gatherRaw, scatterRaw } from '../src/data/raw.ts';
import { tsBytesHashes } from '../src/kernels/bytes-hashes/reference.ts';
import { wasmBytesHashes } from '../src/kernels/bytes-hashes/wasm.ts';
import { tsShuffleBytes } from '../src/kernels/gather-bytes/reference.ts';
import { wasmShuffleBytes } from '../src/kernels/gather-bytes/wasm.ts';
import { DistinctHashes, distinctHashCount } from '../src/pipeline/rows.ts';
import { loadSpec } from '../src/release-spec/spec.ts';
import { AUDIT_MAX_ROWS, auditRawColumns, auditReleaseInPartitions } from '../src/report/audit.ts';
import { Random } from '../src/util/random.ts';
import { bytesHashes } from '../src/verify/fingerprint.ts';
import { helpIfAsked } from './help.ts';
import { REGISTRY_COLUMNS, RIDE_ALONG_COLUMNS, registrySpec, writeRegistryCsv } from './registry-sample.ts';
import { machineInfo } from './scale.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1e6' },
    dir: { type: 'string' },
    release: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    result: { type: 'string', default: 'bench/results/ride-along-costs.json' },
  },
});
const rows = Number(values.rows);
const rounds = Number(values.rounds);
const dir = values.dir ?? join(tmpdir(), `ppdp-ride-along-costs-${rows}`);
const csv = join(dir, 'registry.csv');
if (!existsSync(csv)) {
  mkdirSync(dir, { recursive: true });
  await writeRegistryCsv(csv, rows, true);
  writeFileSync(join(dir, 'release.json'), `${JSON.stringify(registrySpec(true), null, 2)}\n`);
}

/** CPU seconds (user + system) and wall seconds of `f`, with the load average before it. */
function measure<T>(f: () => T): { value: T; cpu: number; wall: number; load: number } {
  const load = loadavg()[0]!;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const c = process.cpuUsage(c0);
  return { value, cpu: (c.user + c.system) / 1e6, wall: (performance.now() - t0) / 1e3, load };
}

const SHARD_ROWS = 250_000;
const ride = new Set<string>(RIDE_ALONG_COLUMNS);
// The ride-along columns as bytes, shard by shard, as the scan reads them.
const shards = [...readCsvShards(csv, SHARD_ROWS, { delimiter: ',', raw: ride })];
const coded = REGISTRY_COLUMNS.filter((c) => c !== 'person_id');
const buffer = readFileSync(csv);
// Each coded column's fields (start, end) in the file, found once.
const fields = coded.map(() => [] as number[]);
{
  const at = coded.map((c) => ['person_id', ...coded].indexOf(c));
  let p = buffer.indexOf(10) + 1;
  while (p < buffer.length) {
    const end = buffer.indexOf(10, p);
    let s = p;
    for (let c = 0; s <= end; c++) {
      const e = buffer.indexOf(44, s);
      const stop = e < 0 || e > end ? end : e;
      const k = at.indexOf(c);
      if (k >= 0) fields[k]!.push(s, stop);
      s = stop + 1;
    }
    p = end + 1;
  }
}
const bounds = fields.map((f) => Int32Array.from(f));
const release = values.release;
const audit = release ? auditInput(release) : undefined;

function auditInput(out: string) {
  const spec = loadSpec(join(dir, 'release.json'));
  const read = readCsv(csv, { delimiter: ',' });
  // As Combine gives the audit a pass-through column: its count of distinct values.
  const input = {
    ...read,
    columns: read.columns.map((c) => (ride.has(c.name) ? { ...c, distinct: c.dictionary.length } : c)),
  };
  const raw = auditRawColumns(spec);
  const parts = readdirSync(join(out, 'data'))
    .filter((f) => f.endsWith('.arrow'))
    .sort()
    .map((f) => readArrow(join(out, 'data', f), { raw }));
  const released = parts.reduce((n, p) => n + p.rowCount, 0);
  return { spec, input, parts, released };
}

/** Output parts a shard's rows are split into (the 10⁷-row release's), and each row's part. */
const PARTS = 17;
const partOf = shards.map((shard) =>
  Int32Array.from({ length: shard.rowCount }, (_, r) => (r * 7919) % PARTS),
);
// Each part's rows of each shard (Apply finds them either way; only the bytes' move is measured).
const rowsOfParts = partOf.map((parts) =>
  Array.from({ length: PARTS }, (_, p) => Int32Array.from(parts.keys()).filter((r) => parts[r] === p)),
);
// Each shard's rows in a seeded random order (Assemble shuffles a part's rows so).
const orderOf = shards.map((shard, s) => new Random(s + 1).permutation(shard.rowCount));
// Each shard's distinct hashes per ride-along column, as the scan hands them to Combine.
const pieceHashes = RIDE_ALONG_COLUMNS.map((name) =>
  shards.map((shard) => {
    const set = new DistinctHashes();
    set.addHashes(bytesHashes(0, shard.columns.find((c) => c.name === name)!.raw!));
    return set.hashes();
  }),
);

const results: Record<string, unknown>[] = [];
for (let round = 0; round < rounds; round++) {
  const distinct = measure(() =>
    RIDE_ALONG_COLUMNS.map((name) => {
      const set = new DistinctHashes();
      for (const shard of shards) set.addAll(shard.columns.find((c) => c.name === name)!.raw!);
      return set.size;
    }),
  );
  const unionBySet = measure(() =>
    pieceHashes.map((lists) => {
      const set = new DistinctHashes();
      for (const list of lists) set.addHashes(list);
      return set.size;
    }),
  );
  const unionByPartitions = measure(() => pieceHashes.map((lists) => distinctHashCount(lists)));
  const rawOf = (s: number, name: string) => shards[s]!.columns.find((c) => c.name === name)!.raw!;
  const gathered = measure(() => {
    let bytes = 0;
    shards.forEach((_, s) => {
      for (const name of RIDE_ALONG_COLUMNS)
        for (const rows of rowsOfParts[s]!) bytes += gatherRaw(rawOf(s, name), rows).bytes.length;
    });
    return bytes;
  });
  const scattered = measure(() => {
    let bytes = 0;
    shards.forEach((_, s) => {
      for (const name of RIDE_ALONG_COLUMNS)
        for (const part of scatterRaw(rawOf(s, name), partOf[s]!, PARTS)) bytes += part.bytes.length;
    });
    return bytes;
  });
  if (unionBySet.value.join() !== unionByPartitions.value.join() || gathered.value !== scattered.value)
    throw new Error('the two ways of a step disagree');
  // Every ride-along value of every shard hashed, by each implementation of the kernel.
  const hashedBy = (kernel: typeof tsBytesHashes) =>
    measure(() =>
      shards.flatMap((_, s) =>
        RIDE_ALONG_COLUMNS.map((name) => {
          const raw = rawOf(s, name);
          const out = new Int32Array(2 * (raw.offsets.length - 1));
          kernel(raw, 1, 2, out);
          return out;
        }),
      ),
    );
  const hashedTs = hashedBy(tsBytesHashes);
  const hashedWasm = hashedBy(wasmBytesHashes);
  if (hashedTs.value.some((h, i) => h.some((w, j) => w !== hashedWasm.value[i]![j])))
    throw new Error('the two implementations of the byte hashes disagree');
  // Every ride-along column of every shard shuffled (Assemble's gather of a part), by each
  // implementation of the kernel that writes the values where the permutation puts them.
  const shuffledBy = (kernel: typeof tsShuffleBytes) =>
    measure(() =>
      shards.flatMap((_, s) =>
        RIDE_ALONG_COLUMNS.map((name) => gatherJoined([rawOf(s, name)], orderOf[s]!, kernel).bytes),
      ),
    );
  const shuffledTs = shuffledBy(tsShuffleBytes);
  const shuffledWasm = shuffledBy(wasmShuffleBytes);
  if (shuffledTs.value.some((b, i) => Buffer.compare(b, shuffledWasm.value[i]!) !== 0))
    throw new Error('the two implementations of the shuffle of values as bytes disagree');
  const dictionaries = measure(() =>
    bounds.map((b) => {
      const d = new ByteDictionary();
      for (let i = 0; i < b.length; i += 2) d.codeOf(buffer, b[i]!, b[i + 1]!);
      return d.size;
    }),
  );
  const audited =
    audit &&
    measure(() =>
      auditReleaseInPartitions(
        audit.spec,
        audit.input,
        audit.input.rowCount,
        audit.parts.length,
        (i) => audit.parts[i]!,
        Math.max(1, Math.ceil(audit.released / AUDIT_MAX_ROWS)),
        audit.released,
      ),
    );
  const row = {
    round,
    distinct: {
      ...distinct,
      value: Object.fromEntries(RIDE_ALONG_COLUMNS.map((c, i) => [c, distinct.value[i]])),
    },
    union: { bySet: unionBySet, byPartitions: unionByPartitions },
    split: { gathered, scattered, parts: PARTS },
    byteHashes: {
      ts: { ...hashedTs, value: undefined },
      wasm: { ...hashedWasm, value: undefined },
      values: hashedTs.value.reduce((n, h) => n + h.length / 2, 0),
    },
    shuffle: {
      ts: { ...shuffledTs, value: undefined },
      wasm: { ...shuffledWasm, value: undefined },
    },
    dictionaries: {
      ...dictionaries,
      value: Object.fromEntries(coded.map((c, i) => [c, dictionaries.value[i]])),
    },
    ...(audited ? { audit: { ...audited, value: audited.value.linkage?.uniqueRows } } : {}),
  };
  results.push(row);
  const f = (m: { cpu: number; wall: number; load: number }) =>
    `${m.cpu.toFixed(2)} s CPU, ${m.wall.toFixed(2)} s wall (load ${m.load.toFixed(1)})`;
  console.log(
    `round ${round}: distinct counts ${f(distinct)}; their union by one set ${f(unionBySet)}, by partitions ${f(unionByPartitions)}; split into ${PARTS} parts by gathering ${f(gathered)}, by scattering ${f(scattered)}; byte hashes in plain TS ${f(hashedTs)}, in WASM ${f(hashedWasm)}; shuffle of the bytes in plain TS ${f(shuffledTs)}, in WASM ${f(shuffledWasm)}; dictionary coding ${f(dictionaries)}${audited ? `; audit ${f(audited)}` : ''}`,
  );
}
writeFileSync(
  values.result!,
  `${JSON.stringify({ machine: machineInfo(), rows, shardRows: SHARD_ROWS, results }, null, 2)}\n`,
);
console.log(`wrote ${values.result}`);
