/**
 * A real s3rver on 127.0.0.1 in a child process (it needs NODE_OPTIONS=--openssl-legacy-provider
 * for paginated listing under OpenSSL 3, which a vitest worker cannot set for itself).
 * Stopping it and starting it again on the same port and folder simulates an outage.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3StoreOptions } from '../../src/pipeline/storage/s3.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

const SERVER = `
import { Readable } from 'node:stream';
import S3rver from 's3rver';
const [dir, port, ...buckets] = process.argv.slice(1);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory: dir,
  configureBuckets: buckets.map((name) => ({ name })) });
// s3rver ignores If-None-Match; Amazon S3 honours it (a conditional PUT to an existing key
// answers 412), and ppdp's locks rely on it. Each such PUT is checked and written one at a
// time per key, as S3 does, in front of s3rver's own routes.
const writing = new Map();
// S3's answer to a request whose condition does not hold.
const preconditionFailed = (ctx) => {
  ctx.status = 412;
  ctx.type = 'application/xml';
  ctx.body = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code>' +
    '<Message>At least one of the pre-conditions you specified did not hold</Message></Error>';
};
server.middleware.unshift(async (ctx, next) => {
  if (ctx.method !== 'PUT' || ctx.get('if-none-match') !== '*') return next();
  const [, bucket, ...rest] = ctx.path.split('/');
  const key = decodeURIComponent(rest.join('/'));
  const id = bucket + '/' + key;
  const before = writing.get(id) ?? Promise.resolve();
  let done;
  const mine = new Promise((resolve) => { done = resolve; });
  const tail = before.then(() => mine);
  writing.set(id, tail);
  await before;
  try {
    if (await server.store.existsObject(bucket, key)) {
      preconditionFailed(ctx);
      return;
    }
    await next();
  } finally {
    done();
    if (writing.get(id) === tail) writing.delete(id);
  }
});
// s3rver ignores If-Match on a GET; Amazon S3 answers 412 when the object's ETag is not the one
// asked for (ppdp pins the input's reads to the version Plan digested).
server.middleware.unshift(async (ctx, next) => {
  const want = ctx.get('if-match');
  if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !want) return next();
  const [, bucket, ...rest] = ctx.path.split('/');
  const key = decodeURIComponent(rest.join('/'));
  const metadata = (await server.store.existsObject(bucket, key)) ? await server.store.getMetadata(bucket, key) : undefined;
  const unquote = (e) => String(e).replace(/^"|"$/g, '');
  if (metadata && unquote(metadata.etag) !== unquote(want)) {
    preconditionFailed(ctx);
    return;
  }
  await next();
});
// Amazon S3 keeps a key as written: \`inbox/a/../b/x\`, \`inbox/./x\` and \`inbox//x\` are keys of
// their own. s3rver files an object at its key's path, which resolves \`.\` and \`..\` (another
// object) and refuses an empty segment; with PPDP_S3RVER_LITERAL_KEYS each such segment (and
// one starting with '~') is filed with '~' before it, and answers list it back as written.
if (process.env.PPDP_S3RVER_LITERAL_KEYS === '1') {
  const special = (seg) => {
    let d;
    try { d = decodeURIComponent(seg); } catch { return false; }
    return d === '' || d === '.' || d === '..' || d.startsWith('~');
  };
  // Every segment of a key (a trailing '/' kept); of a prefix, all but its last, partial one.
  const escape = (key, prefix) => key.split('/').map((s, i, all) =>
    (i < all.length - 1 || (!prefix && s !== '')) && special(s) ? '~' + s : s).join('/');
  const unescape = (key) => key.split('/').map((s) => (s.startsWith('~') ? s.slice(1) : s)).join('/');
  server.middleware.unshift(async (ctx, next) => {
    const [, bucket, ...rest] = ctx.path.split('/');
    if (rest.length > 0) ctx.path = '/' + bucket + '/' + escape(rest.join('/'), false);
    for (const q of ['prefix', 'start-after']) {
      if (typeof ctx.query[q] === 'string') ctx.query = { ...ctx.query, [q]: escape(ctx.query[q], true) };
    }
    const source = ctx.get('x-amz-copy-source');
    if (source) {
      const [path, version] = source.split('?');
      const [b, ...k] = (path.startsWith('/') ? path.slice(1) : path).split('/');
      ctx.request.headers['x-amz-copy-source'] = b + '/' + escape(k.join('/'), false) + (version ? '?' + version : '');
    }
    if (ctx.method === 'POST' && 'delete' in ctx.query) {
      // A batch delete names its keys in its body.
      const chunks = [];
      for await (const c of ctx.req) chunks.push(c);
      const body = Buffer.concat(chunks).toString('utf8')
        .replace(/<Key>([^<]*)</g, (_, k) => '<Key>' + escape(k, false) + '<');
      ctx.req = Readable.from([Buffer.from(body)]);
    }
    await next();
    if (typeof ctx.body === 'string')
      ctx.body = ctx.body.replace(/<(Key|Prefix|StartAfter)>([^<]*)</g, (_, tag, v) => '<' + tag + '>' + unescape(v) + '<');
  });
}
const address = await server.run();
process.stdout.write(JSON.stringify({ port: address.port }) + '\\n');
const stop = () => server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
`;

export class LocalS3 {
  readonly dir = mkdtempSync(join(tmpdir(), 'ppdp-s3rver-'));
  port = 0;
  private child: ChildProcess | undefined;

  constructor(
    readonly bucket = 'ppdp-test',
    /** More buckets to create beside it. */
    readonly others: readonly string[] = [],
    /** Keys kept as written, `.`, `..` and empty segments included, as Amazon S3 keeps them. */
    readonly literalKeys = false,
  ) {}

  /** Starts s3rver (on the same port as before, after a stop). */
  async start(): Promise<void> {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', SERVER, this.dir, String(this.port), this.bucket, ...this.others],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          NODE_OPTIONS: '--openssl-legacy-provider',
          PPDP_S3RVER_LITERAL_KEYS: this.literalKeys ? '1' : '0',
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    this.child = child;
    this.port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error('s3rver did not start in 30 s')), 30_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n')[0];
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve((JSON.parse(line!) as { port: number }).port);
        }
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited (${signal ?? `status ${code}`}) before it listened`));
      });
    });
  }

  /** Stops s3rver and waits until it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    this.child = undefined;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The environment of a CLI process that talks to this server (its credentials). */
  cliEnv(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    };
  }

  /** Client settings for ppdp's S3 store. */
  options(extra: Partial<S3StoreOptions> = {}): S3StoreOptions {
    return {
      endpoint: this.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      maxAttempts: 2,
      ...extra,
    };
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
