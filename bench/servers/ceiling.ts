// The ceiling: bare node:http serving the body from memory. Every other figure is a ratio to this one.
import { createServer } from 'node:http';
import { payload, sizeOfUrl } from '../lib/payloads.js';

const bodies = { '2k': payload('2k'), '200k': payload('200k') };

const server = createServer((req, res) => {
  const body = bodies[sizeOfUrl(req.url ?? '')];
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
