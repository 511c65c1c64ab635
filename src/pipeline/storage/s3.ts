/**
 * Amazon S3 (or an S3-compatible server given by an endpoint) as a store. Client settings that
 * work against AWS and s3rver alike: path-style addressing for custom endpoints and
 * checksums only when required (a streamed PutObject to s3rver otherwise stores the
 * aws-chunked framing inside the object). Large objects go up in parts.
 *
 * Integrity: every write carries the SHA-256 of its bytes, computed here (`ChecksumSHA256`, or
 * per part for a multipart upload), so S3 refuses a body changed on the way; a copy asks S3
 * for the new object's SHA-256 and compares it with the one expected. Liveness: a connection
 * must open within the connection timeout and a request that makes no progress (nothing sent
 * or received) for the request timeout fails; the SDK retries such failures, server errors
 * and throttling, and one that outlasts its attempts is a StoreUnavailableError.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { GetObjectCommandOutput, S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import {
  bodyPieces,
  type Digest,
  inputChanged,
  type PutBody,
  type Store,
  type StoredObject,
  StoreError,
  StoreUnavailableError,
} from './store.ts';

export interface S3StoreOptions {
  /** An S3-compatible server, e.g. http://127.0.0.1:4568 (path-style addressing is used). */
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: { accessKeyId: string; secretAccessKey: string };
  /** SDK attempts per request (default 5, or PPDP_S3_MAX_ATTEMPTS). */
  readonly maxAttempts?: number;
  /** Milliseconds to open a connection (default 5 s, or PPDP_S3_CONNECTION_TIMEOUT_MS). */
  readonly connectionTimeoutMs?: number;
  /**
   * Milliseconds a request may go without sending or receiving a byte (default 30 s, or
   * PPDP_S3_REQUEST_TIMEOUT_MS): an idle limit, so a long transfer that keeps moving is fine.
   */
  readonly requestTimeoutMs?: number;
  /** Objects at least this large are uploaded in parts (default 64 MiB). */
  readonly multipartThreshold?: number;
}

const MULTIPART = 64 * 1024 * 1024;

/**
 * Defaults: S3 opens a connection in milliseconds and sends a response's first bytes within a
 * second or two; a live transfer never pauses for long (S3 keeps a long copy alive with
 * whitespace). So 5 s to connect and 30 s without progress mean a lost request, and five
 * attempts (the SDK's backoff between them) ride out a burst of 503 SlowDown; a hung request
 * costs at most about 2.5 minutes before the state fails and the state machine retries it.
 */
const DEFAULTS = { connectionTimeoutMs: 5_000, requestTimeoutMs: 30_000, maxAttempts: 5 };

/** A positive whole number from the environment, or the default; a bad value is refused. */
function fromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    throw new StoreError(
      'E_STORE_CONFIG',
      `${name}=${raw}: not a positive whole number`,
      `unset ${name} or set it to e.g. ${fallback}`,
    );
  }
  return n;
}

/** Base64 SHA-256, as S3's checksum headers carry it. */
function sha256Base64(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64');
}

// Loaded on first use, so that importing this module (or bundling it) costs nothing.
type Sdk = typeof import('@aws-sdk/client-s3');
type Storage = typeof import('@aws-sdk/lib-storage');
let sdkLoading: Promise<Sdk> | undefined;
let storageLoading: Promise<Storage> | undefined;

/**
 * The module's named exports, wherever the loader put them. Node's own `import()` of the
 * SDK's CommonJS build exposes them by name, but an ESM bundle (esbuild, the Lambda handlers)
 * wraps a CommonJS chunk so that `import()` yields only `default` holding them all.
 */
export function namedExports<T extends object>(mod: T | { default: T }, probe: keyof T): T {
  if (probe in mod) return mod as T;
  const inner = (mod as { default?: T }).default;
  if (inner && typeof inner === 'object' && probe in inner) return inner;
  throw new StoreError(
    'E_STORE_SDK',
    `the AWS SDK loaded without ${String(probe)}`,
    'the bundle is broken: rebuild it (npm run build) or reinstall the dependencies',
  );
}
const loadSdk = (): Promise<Sdk> =>
  (sdkLoading ??= import('@aws-sdk/client-s3').then((m) => namedExports<Sdk>(m, 'S3Client')));
const loadStorage = (): Promise<Storage> =>
  (storageLoading ??= import('@aws-sdk/lib-storage').then((m) => namedExports<Storage>(m, 'Upload')));

export class S3Store implements Store {
  readonly root: string;
  private readonly config: S3ClientConfig;
  private client: S3Client | undefined;
  private readonly threshold: number;

  constructor(
    readonly bucket: string,
    options: S3StoreOptions = {},
  ) {
    this.root = `s3://${bucket}/`;
    this.threshold = options.multipartThreshold ?? MULTIPART;
    const config: S3ClientConfig = {
      region: options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
      // Checksums are passed explicitly (put) or asked for (copy), never left to the SDK's
      // default, which streams with aws-chunked framing that s3rver stores as data.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: options.maxAttempts ?? fromEnv('PPDP_S3_MAX_ATTEMPTS', DEFAULTS.maxAttempts),
      requestHandler: {
        connectionTimeout:
          options.connectionTimeoutMs ??
          fromEnv('PPDP_S3_CONNECTION_TIMEOUT_MS', DEFAULTS.connectionTimeoutMs),
        // Idle time on the socket, sending (an upload) or receiving (headers, then the body).
        socketTimeout:
          options.requestTimeoutMs ?? fromEnv('PPDP_S3_REQUEST_TIMEOUT_MS', DEFAULTS.requestTimeoutMs),
      },
    };
    if (options.endpoint) {
      config.endpoint = options.endpoint;
      config.forcePathStyle = true;
    }
    if (options.credentials) config.credentials = options.credentials;
    this.config = config;
  }

  private async sdk(): Promise<{ sdk: Sdk; client: S3Client }> {
    const sdk = await loadSdk();
    this.client ??= new sdk.S3Client(this.config);
    return { sdk, client: this.client };
  }

  async get(key: string): Promise<Uint8Array> {
    return this.call(key, async () => {
      const { sdk, client } = await this.sdk();
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return out.Body!.transformToByteArray();
    });
  }

  /**
   * With `version` (an ETag), a GET with If-Match: S3 answers 412 for an object replaced since
   * (a new upload, however alike), 404 for one removed. The answer's ETag is compared too, for a
   * server that ignores If-Match.
   */
  async getRange(key: string, start: number, end: number, version?: string): Promise<Uint8Array> {
    if (end <= start) return new Uint8Array(0);
    return this.call(key, async () => {
      const { sdk, client } = await this.sdk();
      let out: GetObjectCommandOutput;
      try {
        out = await client.send(
          new sdk.GetObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Range: `bytes=${start}-${end - 1}`,
            ...(version !== undefined ? { IfMatch: version } : {}),
          }),
        );
      } catch (e) {
        const status = statusOf(e);
        if (version !== undefined && (status === 412 || status === 404 || (e as Error).name === 'NoSuchKey'))
          throw inputChanged(this.root + key);
        throw e;
      }
      if (version !== undefined && out.ETag !== undefined && out.ETag !== version)
        throw inputChanged(this.root + key);
      const bytes = await out.Body!.transformToByteArray();
      if (bytes.length !== end - start) {
        throw new StoreError(
          'E_STORE_RANGE',
          `${this.root}${key}: range read returned ${bytes.length} bytes`,
        );
      }
      return bytes;
    });
  }

  async head(key: string): Promise<number | undefined> {
    return (await this.stat(key))?.size;
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const { sdk, client } = await this.sdk();
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { key, size: out.ContentLength ?? 0, ...(out.ETag ? { version: out.ETag } : {}) };
    } catch (e) {
      const status = statusOf(e);
      if (status === 404 || (e as Error).name === 'NotFound' || (e as Error).name === 'NoSuchKey')
        return undefined;
      throw this.error(e, key);
    }
  }

  async put(key: string, body: PutBody): Promise<void> {
    const pieces = bodyPieces(body);
    const size = pieces.reduce((n, p) => n + p.length, 0);
    await this.call(key, async () => {
      const { sdk, client } = await this.sdk();
      if (size >= this.threshold) {
        // Each part carries the SHA-256 of its bytes (the SDK computes it over the part). Pieces
        // stream into the parts, a new stream each attempt: the body is never copied whole.
        const { Upload } = await loadStorage();
        const stream = pieces.length === 1 ? pieces[0]! : Readable.from(pieces.map(asBuffer));
        await new Upload({
          client,
          params: { Bucket: this.bucket, Key: key, Body: stream, ChecksumAlgorithm: 'SHA256' },
          partSize: 16 * 1024 * 1024,
          queueSize: 4,
        }).done();
      } else {
        // One buffer: PutObject sends and checksums a body whole.
        const bytes = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
        await client.send(
          new sdk.PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: bytes,
            ContentLength: bytes.length,
            ChecksumSHA256: sha256Base64(bytes),
          }),
        );
      }
    });
  }

  /**
   * A conditional PutObject (If-None-Match: *): S3 answers 412 when the key exists, 409 when a
   * concurrent conditional write to it is under way. Exclusive only on a store that honours
   * conditional writes (Amazon S3 does; s3rver does not, so the tests put a check in front of
   * it). The HEAD first spares a write when the key is plainly there.
   */
  async putIfAbsent(key: string, body: string): Promise<boolean> {
    if ((await this.head(key)) !== undefined) return false;
    return this.call(key, async () => {
      const { sdk, client } = await this.sdk();
      try {
        await client.send(
          new sdk.PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: body,
            IfNoneMatch: '*',
            ChecksumSHA256: sha256Base64(Buffer.from(body)),
          }),
        );
        return true;
      } catch (e) {
        const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 412 || status === 409) return false;
        throw e;
      }
    });
  }

  /**
   * A server-side copy. S3 computes the new object's SHA-256 (ChecksumAlgorithm) and answers
   * with it; when it does and `sha256` is given, they must match. A server that answers with
   * none (s3rver) is checked by the caller reading the copy back (Publish does).
   */
  /** A copy inside the bucket, or (`fromBucket`) from another bucket: server-side either way. */
  async copy(from: string, to: string, sha256?: string, fromBucket = this.bucket): Promise<void> {
    const out = await this.call(from, async () => {
      const { sdk, client } = await this.sdk();
      return client.send(
        new sdk.CopyObjectCommand({
          Bucket: this.bucket,
          Key: to,
          CopySource: `${fromBucket}/${from.split('/').map(encodeURIComponent).join('/')}`,
          ChecksumAlgorithm: 'SHA256',
        }),
      );
    });
    const got = out.CopyObjectResult?.ChecksumSHA256;
    // A checksum with a part count (`…-N`) is of the parts' checksums, not of the bytes.
    if (sha256 !== undefined && got !== undefined && !got.includes('-')) {
      const want = Buffer.from(sha256, 'hex').toString('base64');
      if (got !== want) {
        throw new StoreError(
          'E_STORE_COPY',
          `${this.root}${to}: the copy of ${from} has SHA-256 ${Buffer.from(got, 'base64').toString('hex')}, expected ${sha256}`,
          'the copy did not produce the bytes copied; run the release again',
        );
      }
    }
  }

  /** The object's size and SHA-256, hashed as it streams in (memory stays small). */
  async digest(key: string): Promise<Digest> {
    return this.call(key, async () => {
      const { sdk, client } = await this.sdk();
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const chunk of out.Body as AsyncIterable<Uint8Array>) {
        hash.update(chunk);
        bytes += chunk.length;
      }
      return { bytes, sha256: hash.digest('hex') };
    });
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.call(prefix, async () => {
        const { sdk, client } = await this.sdk();
        return client.send(
          new sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
        );
      });
      for (const o of page.Contents ?? [])
        out.push({ key: o.Key!, size: o.Size ?? 0, ...(o.ETag ? { version: o.ETag } : {}) });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      await this.call(batch[0]!, async () => {
        const { sdk, client } = await this.sdk();
        await client.send(
          new sdk.DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        );
      });
    }
  }

  destroy(): void {
    this.client?.destroy();
    this.client = undefined;
  }

  private async call<T>(key: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      throw this.error(e, key);
    }
  }

  /** S3 errors as ppdp errors: missing objects, refusals, and transient failures (retried). */
  private error(e: unknown, key: string): Error {
    if (e instanceof StoreError) return e;
    const err = e as Error & {
      code?: string;
      $metadata?: { httpStatusCode?: number };
      $retryable?: unknown;
    };
    const where = `${this.root}${key}`;
    const status = err.$metadata?.httpStatusCode;
    if (err.name === 'NoSuchKey' || err.name === 'NotFound' || status === 404) {
      return new StoreError('E_STORE_MISSING', `${where}: not found`, 'check the bucket and key');
    }
    if (err.name === 'NoSuchBucket') {
      return new StoreError(
        'E_STORE_BUCKET',
        `${where}: the bucket does not exist`,
        'create it or fix --store',
      );
    }
    if (isTransient(err, status)) {
      const why = err.code ?? err.name ?? 'no answer';
      return new StoreUnavailableError(
        'E_STORE_UNAVAILABLE',
        `${where}: the store is unavailable (${why}${status ? `, HTTP ${status}` : ''})`,
        'check the endpoint or network and run the release again: a failed run publishes nothing',
      );
    }
    if (status === undefined) {
      // No answer from S3 and no network fault: the client itself failed (a broken bundle,
      // bad configuration). Retrying cannot help, so it is not labelled unavailable.
      return new StoreError(
        'E_STORE_CLIENT',
        `${where}: the S3 client failed before reaching the store (${err.name})`,
        'check the S3 settings (region, endpoint, credentials) and that the AWS SDK is installed',
      );
    }
    return new StoreError(
      'E_STORE',
      `${where}: the store refused the request (${err.name}, HTTP ${status})`,
      'check the bucket policy and the credentials',
    );
  }
}

/** The HTTP status of a failed request, when the server answered. */
function statusOf(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** Socket-level failures Node and the SDK report while a request is under way. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
]);
const NETWORK_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'AbortError']);

/** Worth retrying: a server error, throttling, or a request the network lost. */
function isTransient(
  err: Error & { code?: string; $retryable?: unknown },
  status: number | undefined,
): boolean {
  if (status !== undefined) return status >= 500 || status === 429 || err.$retryable !== undefined;
  return (
    err.$retryable !== undefined ||
    (err.code !== undefined && NETWORK_CODES.has(err.code)) ||
    NETWORK_NAMES.has(err.name)
  );
}

/** A piece as a Buffer over the same bytes (the upload's chunker reads Buffers). */
function asBuffer(piece: Uint8Array): Buffer {
  return Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
}
