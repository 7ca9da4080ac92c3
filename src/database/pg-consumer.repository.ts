import type { Client, Pool, PoolClient } from 'pg';
import { keyIdOf, type ConsumerRecord } from '../core/auth/consumer-record.js';
import type {
  AuditEntry,
  ConsumerDatabase,
  ConsumerSetSnapshot,
  ConsumerWrite,
} from '../core/ports/consumer-database.port.js';

/** The channel every replica LISTENs on; the payload is the new version. */
export const CONSUMERS_CHANNEL = 'atrium_consumers';

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 2_000;

type Settings = Omit<ConsumerRecord, 'id' | 'keys' | 'keyHashes'>;

interface ConsumerRow {
  id: string;
  settings: Settings;
  keys: Array<{ key_id: string; sha256: string; expires_at: string | null; created_at: string | null }>;
}

const SNAPSHOT_SQL = `
SELECT c.id, c.settings,
       coalesce(json_agg(json_build_object('key_id', k.key_id, 'sha256', encode(k.sha256, 'hex'),
                 'expires_at', k.expires_at, 'created_at', k.created_at) ORDER BY k.key_id)
                FILTER (WHERE k.key_id IS NOT NULL), '[]') AS keys
  FROM atrium_consumers c LEFT JOIN atrium_consumer_keys k ON k.consumer_id = c.id
 GROUP BY c.id ORDER BY c.id`;

const iso = (t: string | null): string | undefined => (t === null ? undefined : new Date(t).toISOString());

function recordOf(row: ConsumerRow): ConsumerRecord {
  return {
    id: row.id,
    ...row.settings,
    keys: row.keys.map((k) => ({
      id: k.key_id,
      sha256: k.sha256,
      ...(k.expires_at !== null ? { expiresAt: iso(k.expires_at) } : {}),
      ...(k.created_at !== null ? { createdAt: iso(k.created_at) } : {}),
    })),
  };
}

/** A record's keys in one form (the file allows `keyHashes` beside `keys`). */
function keysOfRecord(
  r: ConsumerRecord,
): Array<{ id: string; sha256: string; expiresAt?: string; createdAt?: string }> {
  const id = (hex: string) => keyIdOf(Buffer.from(hex, 'hex'));
  return [
    ...(r.keys ?? []).map((k) => ({ ...k, id: k.id ?? id(k.sha256) })),
    ...(r.keyHashes ?? []).map((h) => ({ id: id(h), sha256: h })),
  ];
}

/**
 * Consumers in PostgreSQL: settings in `atrium_consumers`, key digests in `atrium_consumer_keys` (a unique
 * digest: one key never opens two consumers), a version row bumped by each change under a row lock (changes
 * from several replicas apply one after another, each computed from the set before it), an audit row in the
 * same transaction, and NOTIFY so every replica reloads within milliseconds.
 */
export class PgConsumerRepository implements ConsumerDatabase {
  private listener?: Client;
  private closed = false;
  private retryMs = RECONNECT_MIN_MS;
  private reconnectTimer?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    /** Makes the LISTEN connection (one per replica, outside the pool). */
    private readonly connect: () => Client,
    /** Resolves once the schema is in place (boot migrations); rejects while the database is away. */
    private readonly ready: () => Promise<void> = () => Promise.resolve(),
  ) {}

  async snapshot(): Promise<ConsumerSetSnapshot> {
    // One snapshot: the version and the rows it names are read together.
    return this.transaction((client) => this.read(client), 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async version(): Promise<number> {
    await this.ready();
    const r = await this.pool.query<{ version: string }>('SELECT version FROM atrium_consumer_state');
    return Number(r.rows[0]?.version ?? 0);
  }

  private async read(client: PoolClient): Promise<ConsumerSetSnapshot> {
    const v = await client.query<{ version: string }>('SELECT version FROM atrium_consumer_state');
    const rows = await client.query<ConsumerRow>(SNAPSHOT_SQL);
    return { version: Number(v.rows[0]?.version ?? 0), records: rows.rows.map(recordOf) };
  }

  async write(id: string, compute: ConsumerWrite, audit?: AuditEntry): Promise<ConsumerSetSnapshot> {
    return this.transaction(async (client) => {
      await client.query('SELECT version FROM atrium_consumer_state FOR UPDATE');
      const before = await this.read(client);
      const next = compute(before.records);
      await this.put(client, id, next);
      const version = await this.bump(client);
      if (audit) await this.audit(client, id, audit, version);
      const records = before.records.filter((r) => r.id !== id);
      if (next) records.push(next);
      return { version, records };
    });
  }

  async seed(records: readonly ConsumerRecord[], audit: AuditEntry): Promise<boolean> {
    return this.transaction(async (client) => {
      const v = await client.query<{ version: string }>(
        'SELECT version FROM atrium_consumer_state FOR UPDATE',
      );
      if (Number(v.rows[0]?.version ?? 0) !== 0) return false;
      const existing = await client.query('SELECT 1 FROM atrium_consumers LIMIT 1');
      if (existing.rowCount) return false;
      for (const r of records) await this.put(client, r.id, r);
      const version = await this.bump(client);
      await this.audit(
        client,
        '*',
        { ...audit, detail: { ...audit.detail, consumers: records.length } },
        version,
      );
      return true;
    });
  }

  private async transaction<T>(fn: (client: PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    await this.ready();
    const client = await this.pool.connect();
    // A checked-out client has no pool listener: a connection lost between two queries would otherwise
    // surface as an unhandled 'error' event and end the process. The query in flight rejects on its own.
    const lost = (): void => undefined;
    client.on('error', lost);
    let failure: Error | undefined;
    try {
      await client.query(begin);
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      failure = e as Error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.off('error', lost);
      // A failed transaction's connection may be the broken one: the pool drops it rather than lend it again.
      client.release(failure);
    }
  }

  private async put(client: PoolClient, id: string, record: ConsumerRecord | null): Promise<void> {
    if (record === null) {
      await client.query('DELETE FROM atrium_consumers WHERE id = $1', [id]);
      return;
    }
    const { id: _id, keys: _keys, keyHashes: _hashes, ...settings } = record;
    await client.query(
      `INSERT INTO atrium_consumers (id, settings) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`,
      [id, JSON.stringify(settings)],
    );
    await client.query('DELETE FROM atrium_consumer_keys WHERE consumer_id = $1', [id]);
    const keys = keysOfRecord(record);
    if (keys.length === 0) return;
    await client.query(
      `INSERT INTO atrium_consumer_keys (consumer_id, key_id, sha256, expires_at, created_at)
       SELECT $1, k.key_id, decode(k.sha256, 'hex'), k.expires_at, k.created_at
         FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[])
              AS k(key_id, sha256, expires_at, created_at)`,
      [
        id,
        keys.map((k) => k.id),
        keys.map((k) => k.sha256.toLowerCase()),
        keys.map((k) => k.expiresAt ?? null),
        keys.map((k) => k.createdAt ?? null),
      ],
    );
  }

  private async bump(client: PoolClient): Promise<number> {
    const r = await client.query<{ version: string }>(
      'UPDATE atrium_consumer_state SET version = version + 1 RETURNING version',
    );
    const version = Number(r.rows[0].version);
    // Delivered at commit, to every listening replica (this one included; it ignores its own version).
    await client.query('SELECT pg_notify($1, $2)', [CONSUMERS_CHANNEL, String(version)]);
    return version;
  }

  private async audit(client: PoolClient, id: string, a: AuditEntry, version: number): Promise<void> {
    await client.query(
      `INSERT INTO atrium_audit (actor, ip, action, consumer_id, detail, version) VALUES ($1, $2, $3, $4, $5, $6)`,
      [a.actor, a.ip ?? null, a.action, id, JSON.stringify(a.detail), version],
    );
  }

  listen(onVersion: (version: number) => void, onConnected: () => void): void {
    if (this.closed) return;
    const client = this.connect();
    this.listener = client;
    let failed = false;
    const retry = () => {
      if (failed || this.closed) return;
      failed = true;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      this.reconnectTimer = setTimeout(() => this.listen(onVersion, onConnected), this.retryMs);
      this.reconnectTimer.unref();
      this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (n) => {
      if (n.channel === CONSUMERS_CHANNEL) onVersion(Number(n.payload));
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CONSUMERS_CHANNEL}`))
      .then(() => {
        this.retryMs = RECONNECT_MIN_MS;
        onConnected();
      })
      .catch(retry);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const l = this.listener;
    this.listener = undefined;
    if (l) await l.end().catch(() => undefined);
  }
}
