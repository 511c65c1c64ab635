/**
 * `ppdp explore --serve`: the page on the loopback interface only (127.0.0.1, a free port),
 * for browsers that restrict file:// pages. The page is all there is to serve, and only to a
 * request addressed to this server by name: its Host header must be `127.0.0.1:<port>` or
 * `localhost:<port>`. Any other (say `evil.example`, a name an attacker's DNS points at
 * 127.0.0.1 so that the attacker's page may read the answer: DNS rebinding) is refused with
 * 421. The page's Content-Security-Policy is sent as a header too, with what only a header
 * can say (no framing).
 */
import { createServer, type Server } from 'node:http';
import { explorerCsp } from './page.ts';

/** Whether a request's Host header names this server: 127.0.0.1 or localhost, at its port. */
export function allowedHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const h = host.toLowerCase();
  return h === `127.0.0.1:${port}` || h === `localhost:${port}`;
}

/** Starts serving `page` at `/` and returns its URL; `server` lets a caller close it. */
export function serveExplorer(page: string, onServer: (server: Server) => void = () => {}): Promise<string> {
  const text = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' };
  const server = createServer((req, res) => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    if (!allowedHost(req.headers.host, port)) {
      res
        .writeHead(421, text)
        .end(`refused: this server answers only requests for 127.0.0.1:${port} or localhost:${port}\n`);
      return;
    }
    if (req.method !== 'GET' || (req.url !== '/' && req.url !== '/explore.html')) {
      res.writeHead(404, text).end('not found: only / is served\n');
      return;
    }
    res
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': `${explorerCsp()}; frame-ancestors 'none'`,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      })
      .end(page);
  });
  onServer(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`);
    });
  });
}
