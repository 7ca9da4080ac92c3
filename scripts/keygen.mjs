#!/usr/bin/env node
// Prints a fresh consumer key and the SHA-256 hash to put in the consumers file. The key is shown once;
// only the hash is stored anywhere.
import { createHash, randomBytes } from 'node:crypto';

const id = process.argv[2] ?? 'my-app';
const key = `atr_${randomBytes(32).toString('base64url')}`;
const hash = createHash('sha256').update(key).digest('hex');
process.stdout.write(
  [
    `consumer id : ${id}`,
    `key         : ${key}`,
    `sha256      : ${hash}`,
    '',
    'Give the key to the app team over a secure channel; add this to the consumers file:',
    JSON.stringify({ id, keyHashes: [hash], upstreams: ['macro'], write: false }, null, 2),
    '',
  ].join('\n'),
);
