/**
 * An HTTP proxy on 127.0.0.1 in front of an S3-protocol server (s3rver) that injects faults
 * into chosen requests: no answer at all, an answer that stops after its first bytes, a
 * 503 SlowDown, an answer with its body rewritten, or a request held until the test lets it
 * go on (to do something, such as signal the process, while it is under way). Every other request passes through unchanged. Bounded: it listens on loopback
 * only and closes itself (dropping any request it holds) after `lifetimeMs`.
 *
 *   const proxy = await startFaultProxy(s3.port);
 *   proxy.inject({ method: 'GET', action: 'hang', times: 1 });
 *   ... an S3 store with endpoint proxy.endpoint ...
 *   await proxy.close();
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';

export type FaultAction =
  /** Read the request, never answer. */
  | 'hang'
  /** Forward it, pass the answer's headers and first chunk on, then stop sending. */
  | 'stall'
  /** Answer 503 SlowDown (S3's throttling answer, which clients retry). */
  | '503'
  /** Forward it and pass the answer on with its body changed by `rewrite` (e.g. a field S3 adds). */
  | 'rewrite'
  /** Hold it, unanswered, until `release()`, then forward it. */
  | 'hold';

export interface Fault {
  /** Requests with this method (any when omitted)… */
  readonly method?: string;
  /** …whose path and query contain this (any when omitted). */
  readonly path?: string;
  readonly action: FaultAction;
  /** For 'rewrite': the new body from the server's. */
  readonly rewrite?: (body: string) => string;
  /** How many matching requests get the fault (default: all of them). */
  times?: number;
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The fault it got, or 'pass'. */
  readonly outcome: FaultAction | 'pass';
}

export interface FaultProxy {
  readonly endpoint: string;
  /** Every request so far, in order of arrival. */
  readonly seen: SeenRequest[];
  inject(fault: Fault): void;
  /** Removes every fault not yet used up. */
  clear(): void;
  /** Forwards the requests held so far. */
  release(): void;
  close(): Promise<void>;
}

const SLOW_DOWN =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>' +
  '<Message>Please reduce your request rate.</Message></Error>';

export async function startFaultProxy(targetPort: number, lifetimeMs = 120_000): Promise<FaultProxy> {
  const faults: Fault[] = [];
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const held: (() => void)[] = [];

  const pick = (req: IncomingMessage): Fault | undefined => {
    const i = faults.findIndex(
      (f) =>
        (f.method === undefined || f.method === req.method) &&
        (f.path === undefined || (req.url ?? '').includes(f.path)),
    );
    if (i < 0) return undefined;
    const fault = faults[i]!;
    if (fault.times !== undefined && --fault.times <= 0) faults.splice(i, 1);
    return fault;
  };

  const forward = (req: IncomingMessage, res: ServerResponse, fault: Fault | undefined): void => {
    const upstream = request(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (fault?.action === 'rewrite') {
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('end', () => {
            const body = Buffer.from(fault.rewrite!(Buffer.concat(chunks).toString('utf8')));
            const { 'transfer-encoding': _, ...headers } = answer.headers;
            res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': body.length });
            res.end(body);
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (fault?.action !== 'stall') {
          answer.pipe(res);
          return;
        }
        answer.once('data', (chunk: Buffer) => {
          res.write(chunk.subarray(0, Math.max(1, Math.floor(chunk.length / 2))));
          answer.destroy(); // the rest never comes
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };

  const server = createServer((req, res) => {
    const fault = pick(req);
    const outcome = fault?.action ?? 'pass';
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, outcome });
    if (outcome === 'hang') {
      req.resume(); // the body is read, the answer never sent
      return;
    }
    if (outcome === 'hold') {
      held.push(() => forward(req, res, fault));
      return;
    }
    if (outcome === '503') {
      req.resume();
      req.on('end', () => {
        res.writeHead(503, { 'content-type': 'application/xml', 'content-length': SLOW_DOWN.length });
        res.end(SLOW_DOWN);
      });
      return;
    }
    forward(req, res, fault);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      clearTimeout(timer);
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }));
  const timer = setTimeout(close, lifetimeMs);
  timer.unref();

  return {
    endpoint: `http://127.0.0.1:${port}`,
    seen,
    inject: (fault) => faults.push({ ...fault }),
    clear: () => faults.splice(0),
    release: () => {
      for (const go of held.splice(0)) go();
    },
    close,
  };
}
