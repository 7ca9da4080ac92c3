import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The hardening tier's figures. Each suite writes its own counters to a JSON file in the directory the
 * tier's global setup names (ATRIUM_HARDENING_RESULTS_DIR); the global teardown sums them into one table
 * (printed, and written to bench/results/hardening.json). Self-contained (no project imports): the global
 * teardown reads these types too.
 */
export const RESULTS_DIR_ENV = 'ATRIUM_HARDENING_RESULTS_DIR';

export const COUNTERS = [
  'faultCasesSurvived',
  'faultCasesTotal',
  'fleetCasesSurvived',
  'fleetCasesTotal',
  'fuzzInputs',
  'gateway5xx',
  'upstreamCallsForInvalidInput',
  'consumerCredentialsAtVendor',
  'duplicatedVendorWrites',
  'secretsFound',
  'secretsFoundInAnyEscaping',
  'gatewayKeysAtVendor',
  'errorsOutsideEnvelope',
  'answersPastDeadline',
  'stateFaultsSurvived',
  'stateFaultsTotal',
  'vendorCallsOverBudgetInFault',
  'stateRowsLost',
  'faultsSharedAfter5s',
] as const;
export type CounterName = (typeof COUNTERS)[number];

export interface CaseResult {
  name: string;
  survived: boolean;
  /** What failed, one line each (empty when survived). */
  failures: string[];
}

export interface SuiteResults {
  /** `failover` and `database`: the fleet and postgres tiers' state faults, summed here when they run. */
  suite: 'faults' | 'fleet' | 'fuzz' | 'leaks' | 'failover' | 'database';
  finishedAt: string;
  durationMs: number;
  counters: Partial<Record<CounterName, number>>;
  cases?: CaseResult[];
  /** Up to a few examples per violated property, for the report. */
  examples?: Record<string, string[]>;
  notes?: string[];
}

/** Writes a suite's figures where the tier's teardown will find them (no-op outside the tier). */
export function writeSuiteResults(results: SuiteResults): void {
  const dir = process.env[RESULTS_DIR_ENV];
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${results.suite}.json`), JSON.stringify(results, null, 2));
}
