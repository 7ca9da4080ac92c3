import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { UpstreamName } from '../../src/upstreams/index.js';

export type InterfaceName = UpstreamName;

export interface SpecOperation {
  interface: InterfaceName;
  method: string;
  path: string;
}

/**
 * The operations of the interfaces, from the project's own fixture (transcribed from the specification,
 * never derived from the route tables it is used to check).
 */
export function allSpecOperations(): SpecOperation[] {
  const file = resolve(__dirname, '../fixtures/spec-operations.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { operations: SpecOperation[] }).operations;
}

export function specOperations(upstream: InterfaceName): SpecOperation[] {
  return allSpecOperations().filter((op) => op.interface === upstream);
}
