import type { ConsumerRecord } from '../auth/consumer-record.js';

/**
 * The consumers' system of record (PostgreSQL when DATABASE_URL is set, src/database), or null: then the
 * consumers file (or Redis, for fleets set up before the database) is the source. Core reaches it through
 * this token without importing the database module.
 */
export const CONSUMER_DATABASE = Symbol('ConsumerDatabase');

/** One admin change as the audit trail keeps it: who, what, which fields or key id (never a key). */
export interface AuditEntry {
  readonly actor: string;
  readonly ip?: string;
  readonly action: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface ConsumerSetSnapshot {
  /** Bumped by every change (0: never written). */
  readonly version: number;
  readonly records: readonly ConsumerRecord[];
}

/**
 * `compute` gets the set as stored (under a lock: no other replica writes meanwhile) and returns the
 * consumer's new record, or null to delete it; it may throw to refuse (nothing is written then).
 */
export type ConsumerWrite = (current: readonly ConsumerRecord[]) => ConsumerRecord | null;

export interface ConsumerDatabase {
  snapshot(): Promise<ConsumerSetSnapshot>;
  version(): Promise<number>;
  /** Applies one change and its audit entry in one transaction, and announces the new version. */
  write(id: string, compute: ConsumerWrite, audit?: AuditEntry): Promise<ConsumerSetSnapshot>;
  /** Writes `records` when the store was never written; false when it already holds a set. */
  seed(records: readonly ConsumerRecord[], audit: AuditEntry): Promise<boolean>;
  /**
   * Calls `onVersion` with each version another replica announces, and `onConnected` each time the
   * announcement channel is (re)established (announcements sent while it was down are lost: catch up).
   */
  listen(onVersion: (version: number) => void, onConnected: () => void): void;
  close(): Promise<void>;
}

export type ConsumerDatabaseClient = ConsumerDatabase | null;
