/**
 * An HTTP proxy on 127.0.0.1 between the Lambda functions and the S3-protocol server, for
 * faults the network gives a real deployment: a request that never gets an answer, and a
 * burst of 503 Slow Down answers; and, to stop a function at a known point of its work, a
 * request done by the server whose answer never reaches the client. Every other request passes
 * through unchanged (its Host header too: SigV4 signs it, so the server checks the signature
 * the client made).
 * Bounded: each rule fires a set number of times, the proxy serves loopback only, and it
 * stops itself after `lifetimeMs`, ending any request it holds.
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { Socket } from 'node:net';

export interface S3FaultRule {
  /**
   * Requests the rule applies to: a method (or any of several) and a pattern over the path
   * (`/<bucket>/<key>?query`).
   */
  readonly method?: string | readonly string[];
  readonly path?: RegExp;
  /** Matching requests passed through before the rule fires (default 0). */
  readonly skip?: number;
  /** How many matching requests it answers (default 1). */
  readonly count?: number;
  /**
   * `hang`: keep the request open, never answer; `503`: answer 503 SlowDown; `hold`: pass it
   * to the server, which does it, and keep the server's answer from the client (never sent).
   */
  readonly fault: 'hang' | '503' | 'hold';
}

export interface S3FaultLog {
  readonly method: string;
  readonly path: string;
  readonly fault: S3FaultRule['fault'] | 'pass';
  /** The server's answer to a request passed through (or held). */
  status?: number;
  /** A batch delete's body (the keys it names). */
  body?: string;
}

export class S3FaultProxy {
  /** Every request seen, in order, with what the proxy did to it. */
  readonly log: S3FaultLog[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly seen: number[];
  private readonly stopTimer: NodeJS.Timeout;
  port = 0;

  private constructor(
    private readonly target: URL,
    private readonly rules: readonly S3FaultRule[],
    lifetimeMs: number,
    private readonly onHeld: () => void,
  ) {
    this.seen = rules.map(() => 0);
    this.server = createServer((req, res) => {
      const fault = this.faultFor(req);
      const entry: S3FaultLog = { method: req.method ?? '', path: req.url ?? '', fault: fault ?? 'pass' };
      this.log.push(entry);
      if (fault === 'hang') {
        req.resume(); // read the body, answer nothing
        return;
      }
      if (fault === '503') {
        req.resume();
        res.writeHead(503, { 'content-type': 'application/xml' });
        res.end(
          '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>' +
            '<Message>Please reduce your request rate.</Message></Error>',
        );
        return;
      }
      const upstream = request(
        {
          host: this.target.hostname,
          port: this.target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          entry.status = answer.statusCode;
          if (fault === 'hold') {
            answer.resume(); // the server did the request; its client never learns it
            this.onHeld();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      if (/[?&]delete(=|&|$)/.test(entry.path)) {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          entry.body = Buffer.concat(chunks).toString('utf8');
        });
      }
      req.pipe(upstream);
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.stopTimer = setTimeout(() => void this.stop(), lifetimeMs);
    this.stopTimer.unref();
  }

  /**
   * Starts a proxy in front of `endpoint` (an http://127.0.0.1 address); `onHeld` is called
   * each time the server's answer to a request the proxy holds comes back.
   */
  static async start(
    endpoint: string,
    rules: readonly S3FaultRule[],
    lifetimeMs = 10 * 60_000,
    onHeld: () => void = () => {},
  ) {
    const target = new URL(endpoint);
    if (target.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(target.hostname))
      throw new Error(`the fault proxy serves loopback only, not ${endpoint}`);
    const proxy = new S3FaultProxy(target, rules, lifetimeMs, onHeld);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy.port = (proxy.server.address() as { port: number }).port;
    return proxy;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** How many requests each fault was given. */
  count(fault: S3FaultRule['fault']): number {
    return this.log.filter((l) => l.fault === fault).length;
  }

  /** Stops listening and ends every connection, held requests included. */
  async stop(): Promise<void> {
    clearTimeout(this.stopTimer);
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private faultFor(req: IncomingMessage): S3FaultRule['fault'] | undefined {
    for (const [i, rule] of this.rules.entries()) {
      if (rule.method !== undefined && ![rule.method].flat().includes(req.method ?? '')) continue;
      if (rule.path && !rule.path.test(req.url ?? '')) continue;
      const n = this.seen[i]!++;
      const skip = rule.skip ?? 0;
      if (n >= skip && n < skip + (rule.count ?? 1)) return rule.fault;
    }
    return undefined;
  }
}
