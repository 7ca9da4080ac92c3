// The Atrium client for front ends: `npm run client:generate` regenerates `generated/` from the gateway.
export * from './runtime.js';
export * from './watch.js';
export * from './atrium-client.js';
export * from './generated/api.js';
export * from './generated/operations.js';
