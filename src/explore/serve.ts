/**
 * `ppdp explore --serve`: the page on the loopback interface only (127.0.0.1, a free port),
 * for browsers that restrict file:// pages. The page is all there is to serve.
 */
import { createServer, type Server } from 'node:http';

/** Starts serving `page` at `/` and returns its URL; `server` lets a caller close it. */
export function serveExplorer(page: string, onServer: (server: Server) => void = () => {}): Promise<string> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url !== '/' && req.url !== '/explore.html')) {
      res
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('not found: only / is served\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
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
