// The bare proxy: node:http + one undici Pool to the fake upstream, bytes passed through. What "calling the
// vendor directly" costs per request, without any gateway concern (auth, limits, cache, logs).
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = new URL(process.env.UPSTREAM_BASE_URL ?? 'http://127.0.0.1:9/v2');
const basePath = upstream.pathname.replace(/\/+$/, '');
const pool = new Pool(upstream.origin, { connections: 64, keepAliveTimeout: 30_000 });
const PREFIX = '/macro';

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const path = basePath + (url.startsWith(PREFIX) ? url.slice(PREFIX.length) : url);
  pool
    .request({ method: 'GET', path })
    .then(async (up) => {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of up.body) {
        chunks.push(c as Buffer);
        size += (c as Buffer).length;
      }
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      const type = up.headers['content-type'];
      res.writeHead(up.statusCode, {
        'content-type': typeof type === 'string' ? type : 'application/json',
        'content-length': body.length,
      });
      res.end(body);
    })
    .catch(() => {
      res.writeHead(502);
      res.end();
    });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => void pool.close().then(() => process.exit(0))));
