import { subscriberConnection } from '../redis/redis-connection.js';
import { createHash } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { SharedRedis } from '../ports/redis.port.js';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { REDIS_CLIENT } from '../ports/redis.port.js';
import {
  CONSUMER_DATABASE,
  type AuditEntry,
  type ConsumerDatabaseClient,
} from '../ports/consumer-database.port.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Consumer } from './consumer.js';
import { CONSUMER_STORE } from './consumer-auth.guard.js';
import { checkConsumerSet, ConsumersFileError, parseConsumer, toRecord } from './consumer-record.js';
import { loadConsumersFile, type ConsumerStore } from './consumer-store.service.js';
import { RedisConsumerRepository } from './redis-consumer.repository.js';

/** Where the consumers in force come from (README "Consumers at run time"). */
export type ConsumerSource = 'database' | 'redis' | 'file' | 'memory';

export interface ConsumerSourceState {
  readonly source: ConsumerSource;
  /** Whether the admin API may change consumers here. */
  readonly writable: boolean;
  /** Database or Redis: the version in force (0: none loaded yet). */
  readonly version: number;
  /** Epoch ms of the last successful load (boot, reload, change). */
  readonly loadedAt: number;
  /** The last load that failed and why (store unreachable, an invalid file); null once a load succeeds. */
  readonly lastError: string | null;
}

/** The consumer's new state, or null to delete it. Throws (GatewayError, ConsumersFileError) to refuse. */
export type ConsumerChange = (current: Consumer | undefined) => Consumer | null;

/** Safety net beside pub/sub: a missed announcement is caught by the next poll. */
const POLL_MS = 2_000;
/** The database's version check beside LISTEN: a change is in force everywhere within a second even so. */
const DB_POLL_MS = 1_000;
/** The file is polled by stat (survives editors' rename-over and ConfigMap symlink swaps). */
const FILE_POLL_MS = 500;
/** How long boot waits for Redis before serving the file's set (or none) and catching up later. */
const BOOT_WAIT_MS = 2_000;
/**
 * A load or version check that failed (a command timed out while this process was busy) is tried again this
 * soon, a few times, rather than at the next poll: the change it was for is otherwise late by a poll.
 */
const RETRY_MS = 200;
const QUICK_RETRIES = 3;
const WRITE_ATTEMPTS = 5;

const digestOf = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Whether `p` settled within `ms`. */
const within = (p: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
};

/**
 * Keeps the ConsumerStore in step with the source of truth. With a database (DATABASE_URL): consumers live
 * in PostgreSQL (a given file seeds an empty one), each change is announced by NOTIFY and checked by a
 * version poll, and a replica that cannot reach the database keeps authenticating with the last set it
 * loaded (admin writes answer 503 meanwhile). With Redis and no database (fleets set up before the
 * database; `npm run consumers:to-database` moves them): consumers live in Redis (a given
 * file seeds an empty store), changes are announced by pub/sub and every replica reloads; a replica that
 * cannot reach Redis keeps the last set it had. Without Redis: the consumers file is the source, re-read on
 * SIGHUP and when it changes; an invalid file is refused with a log line and the set in force stays. Without
 * either (sandbox), changes live in this process only.
 */
@Injectable()
export class ConsumerRegistry implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Consumers');
  readonly source: ConsumerSource;
  private readonly repo?: RedisConsumerRepository;
  private readonly known: readonly string[];
  private version = 0;
  private loadedAt = Date.now();
  private lastError: string | null = null;
  private fileDigest?: string;
  private readonly seed?: readonly Consumer[];
  private subscriber?: SharedRedis;
  private poll?: NodeJS.Timeout;
  private retry?: NodeJS.Timeout;
  private retries = 0;
  /** The check a failure is retried with (the source's version check); unset once shut down. */
  private recheck?: () => Promise<void>;
  private reloading?: Promise<void>;
  /** A load was asked for while one ran (which may have read the set before the change it is for). */
  private reloadAgain = false;
  private readonly onHup = () => void this.reloadFile('SIGHUP');
  private readonly onFileStat = (cur: Stats, prev: Stats) => {
    if (cur.mtimeMs !== prev.mtimeMs || cur.size !== prev.size || cur.ino !== prev.ino)
      void this.reloadFile('file changed');
  };

  constructor(
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    @Inject(CONSUMER_STORE) private readonly store: ConsumerStore,
    @Inject(REDIS_CLIENT) private readonly redis: SharedRedis | null,
    @Optional() @Inject(CONSUMER_DATABASE) private readonly db: ConsumerDatabaseClient = null,
  ) {
    this.known = Object.keys(config.upstreams);
    this.source = db ? 'database' : redis ? 'redis' : config.consumersFile ? 'file' : 'memory';
    if (redis && !db) this.repo = new RedisConsumerRepository(redis, config.redisPrefix);
    // The set given at boot (the file main.ts read, or the consumers an embedding app passed in): what an
    // empty store is seeded with. Without it a fresh store would answer every key with 401.
    if ((redis || db) && store.all().length > 0) this.seed = store.all();
  }

  state(): ConsumerSourceState {
    return {
      source: this.source,
      writable: this.source !== 'file',
      version: this.version,
      loadedAt: this.loadedAt,
      lastError: this.lastError,
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.source === 'file') {
      const path = this.config.consumersFile!;
      try {
        this.fileDigest = digestOf(readFileSync(path, 'utf8'));
      } catch {
        // main.ts read it a moment ago; a reload will say what is wrong.
      }
      watchFile(path, { interval: FILE_POLL_MS, persistent: false }, this.onFileStat);
      process.on('SIGHUP', this.onHup);
      return;
    }
    if (this.db) return this.bootFromDatabase(this.db);
    if (!this.redis || !this.repo) return;
    // Redis may evict or restart empty: it should hold only what may be lost (docs/operations.md "State").
    this.logger.warn(
      'consumers are kept in Redis (no DATABASE_URL): set DATABASE_URL and run `npm run consumers:to-database` ' +
        'so that an eviction or a Redis restart cannot lose them',
    );
    this.recheck = () => this.checkVersion();
    const subscribed = this.subscribe(this.redis);
    if (await this.redisReady(this.redis)) {
      await this.syncFromRedis(true);
      // Serving before the channel is subscribed would leave a change announced meanwhile to the next poll.
      if (!(await within(subscribed, BOOT_WAIT_MS)))
        this.logger.warn(
          'the consumer change channel is not subscribed yet: changes made on other replicas reach this ' +
            'one by the version poll until it is',
        );
    } else
      this.logger.warn(
        `Redis not reachable at boot: serving the ${this.store.all().length} consumer(s) of the ` +
          'consumers file (or none) until it is',
      );
    this.poll = setInterval(() => void this.checkVersion(), POLL_MS);
    this.poll.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    this.recheck = undefined;
    if (this.retry) clearTimeout(this.retry);
    await this.db?.close();
    if (this.source === 'file') {
      unwatchFile(this.config.consumersFile!, this.onFileStat);
      process.off('SIGHUP', this.onHup);
    }
    const sub = this.subscriber;
    if (sub) {
      try {
        await sub.quit();
      } catch {
        sub.disconnect();
      }
    }
  }

  /**
   * Applies one change to the source of truth and to this replica (the others follow by pub/sub). Validated
   * like the file: the consumer on its own (parseConsumer, by the caller) and the whole set here.
   */
  async change(id: string, fn: ConsumerChange, audit?: AuditEntry): Promise<Consumer | null> {
    if (this.source === 'file')
      throw new GatewayError('CONFLICT', {
        message:
          'Consumers come from the consumers file (ATRIUM_CONSUMERS_FILE) when DATABASE_URL is not set: ' +
          'edit the file (it is reloaded when it changes and on SIGHUP), or set DATABASE_URL to manage ' +
          'consumers here.',
      });
    if (this.db) return this.changeInDatabase(this.db, id, fn, audit);
    if (this.source === 'memory') {
      const { result, next } = this.apply(this.store.all(), id, fn);
      this.install(next, this.version + 1);
      return result;
    }
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const snap = await this.redisCall(() => this.repo!.snapshot());
      const current = this.parseSnapshot(snap.values);
      const { result, next } = this.apply(current, id, fn);
      const v = await this.redisCall(() => this.repo!.write(snap.version, id, result && toRecord(result)));
      if (v === null) continue; // another replica wrote in between: recompute from its set
      this.install(next, v);
      return result;
    }
    throw new GatewayError('CONFLICT', {
      message: 'Consumers changed concurrently on other replicas; nothing was changed. Retry.',
    });
  }

  private apply(
    current: readonly Consumer[],
    id: string,
    fn: ConsumerChange,
  ): { result: Consumer | null; next: Consumer[] } {
    const result = fn(current.find((c) => c.id === id));
    const next = current.filter((c) => c.id !== id);
    if (result) next.push(result);
    checkConsumerSet(next);
    return { result, next };
  }

  private install(next: readonly Consumer[], version: number): void {
    this.store.replace(next);
    this.version = version;
    this.loadedAt = Date.now();
    this.lastError = null;
    this.retries = 0;
  }

  /**
   * Runs the source's load one at a time. A load asked for while one runs gets one more after it: the running
   * one may have read the set before the change that was announced meanwhile.
   */
  private serialLoad(load: (boot: boolean) => Promise<void>, boot: boolean): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    const run = async () => {
      await load(boot);
      while (this.reloadAgain) {
        this.reloadAgain = false;
        await load(false);
      }
    };
    this.reloading = run().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  private async redisCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', {
        message: 'The consumer store (Redis) did not answer; nothing was changed. Retry later.',
        cause: e,
      });
    }
  }

  private parseSnapshot(values: readonly string[]): Consumer[] {
    const list = values.map((v, i) => {
      let raw: unknown;
      try {
        raw = JSON.parse(v);
      } catch {
        throw new ConsumersFileError(`consumer store: entry ${i} is not valid JSON`);
      }
      return parseConsumer(raw, i, this.known);
    });
    checkConsumerSet(list);
    return list;
  }

  // --- Database ------------------------------------------------------------------------------------

  private async changeInDatabase(
    db: NonNullable<ConsumerDatabaseClient>,
    id: string,
    fn: ConsumerChange,
    audit?: AuditEntry,
  ): Promise<Consumer | null> {
    let result: Consumer | null = null;
    let snap;
    try {
      // Computed inside the database's transaction, from the set it holds under its lock.
      snap = await db.write(
        id,
        (records) => {
          const { result: r } = this.apply(this.parseRecords(records), id, fn);
          result = r;
          return r && toRecord(r);
        },
        audit,
      );
    } catch (e) {
      if (e instanceof GatewayError || e instanceof ConsumersFileError) throw e;
      throw new GatewayError('UPSTREAM_UNAVAILABLE', {
        message: 'The consumer store (PostgreSQL) did not answer; nothing was changed. Retry later.',
        cause: e,
      });
    }
    if (snap.version > this.version) this.install(this.parseRecords(snap.records), snap.version);
    return result;
  }

  private parseRecords(records: readonly unknown[]): Consumer[] {
    const list = records.map((r, i) => parseConsumer(r, i, this.known));
    checkConsumerSet(list);
    return list;
  }

  private async bootFromDatabase(db: NonNullable<ConsumerDatabaseClient>): Promise<void> {
    this.recheck = () => this.checkDatabaseVersion(db);
    db.listen(
      (v) => {
        if (v !== this.version) void this.syncFromDatabase(db, false);
      },
      // Announcements sent while the channel was down are lost: catch up on every (re)connect.
      () => void this.syncFromDatabase(db, false),
    );
    await this.syncFromDatabase(db, true);
    if (this.version === 0 && this.lastError)
      this.logger.warn(
        `database not reachable at boot: serving the ${this.store.all().length} consumer(s) of the ` +
          'consumers file (or none) until it is',
      );
    this.poll = setInterval(() => void this.checkDatabaseVersion(db), DB_POLL_MS);
    this.poll.unref();
  }

  private async checkDatabaseVersion(db: NonNullable<ConsumerDatabaseClient>): Promise<void> {
    try {
      if ((await db.version()) !== this.version) await this.syncFromDatabase(db, false);
      else this.retries = 0;
    } catch (e) {
      this.noteFailure(`database: ${(e as Error).message}`);
    }
  }

  private syncFromDatabase(db: NonNullable<ConsumerDatabaseClient>, boot: boolean): Promise<void> {
    return this.serialLoad((b) => this.loadFromDatabase(db, b), boot);
  }

  private async loadFromDatabase(db: NonNullable<ConsumerDatabaseClient>, boot: boolean): Promise<void> {
    try {
      if (this.seed && this.version === 0) {
        const seeded = await db.seed(this.seed.map(toRecord), {
          actor: 'boot',
          action: 'consumers.seed',
          detail: { from: this.config.consumersFile ? 'consumers file' : 'boot set' },
        });
        if (seeded)
          this.logger.log(`seeded the consumer database with ${this.seed.length} consumer(s) from the file`);
        else if (boot)
          this.logger.log(
            'the consumer database already holds consumers: the consumers file is not read again ' +
              '(manage consumers with /admin/consumers)',
          );
      }
      const snap = await db.snapshot();
      // A set older than the one in force (a read that raced a change) is not installed.
      if ((snap.version === this.version && !boot) || snap.version < this.version) {
        this.retries = 0;
        return;
      }
      const list = this.parseRecords(snap.records);
      this.install(list, snap.version);
      this.logger.log(`consumers in force: ${list.length} (database version ${snap.version})`);
    } catch (e) {
      this.noteFailure(e instanceof ConsumersFileError ? e.message : `database: ${(e as Error).message}`);
    }
  }

  // --- Redis ---------------------------------------------------------------------------------------

  private redisReady(redis: SharedRedis): Promise<boolean> {
    if (redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), BOOT_WAIT_MS);
      redis.on('ready', onReady);
    });
  }

  /** Resolves once the channel is first subscribed and the set re-read after it. */
  private subscribe(redis: SharedRedis): Promise<void> {
    // A subscribed connection can do nothing else: a second one, whose catch-up below runs once subscribed.
    const sub = subscriberConnection(redis);
    this.subscriber = sub;
    sub.on('error', () => undefined); // the shared client's lifecycle logs Redis outages
    sub.on('message', (_channel: string, message: string) => {
      if (Number(message) !== this.version) void this.syncFromRedis(false);
    });
    return new Promise((subscribed) => {
      sub.on('ready', () => {
        sub
          .subscribe(this.repo!.channel)
          // Announcements sent while this replica was cut off are lost: catch up on every (re)connect.
          .then(() => this.syncFromRedis(false))
          .catch((e: Error) => this.logger.warn(`consumer change channel: ${e.message}`))
          .finally(() => subscribed());
      });
    });
  }

  private async checkVersion(): Promise<void> {
    try {
      if ((await this.repo!.version()) !== this.version) await this.syncFromRedis(false);
      else this.retries = 0;
    } catch (e) {
      // Down: the set in force stays; the next poll or the subscriber's reconnect catches up.
      this.noteFailure(`Redis: ${(e as Error).message}`);
    }
  }

  /** Loads the set from Redis (one load at a time); at boot, seeds an empty store from the file first. */
  private syncFromRedis(boot: boolean): Promise<void> {
    return this.serialLoad((b) => this.loadFromRedis(b), boot);
  }

  private async loadFromRedis(boot: boolean): Promise<void> {
    const repo = this.repo!;
    try {
      // Until a first load succeeds (Redis may be down at boot), the file's set may still seed the store.
      if (this.seed && this.version === 0) {
        const seeded = await repo.seed(this.seed.map(toRecord));
        if (seeded)
          this.logger.log(
            `seeded the Redis consumer store with ${this.seed.length} consumer(s) from the file`,
          );
        else
          this.logger.log(
            'the Redis consumer store already holds consumers: the consumers file is not read again ' +
              '(manage consumers with /admin/consumers)',
          );
      }
      let snap = await repo.snapshot();
      if (snap.version === 0 && this.version > 0) {
        // The store vanished under us (a Redis restarted without persistence, a flushed prefix): installing
        // the empty set would answer every key with 401 on every replica. Put back the set in force.
        const inForce = this.store.all();
        if (await repo.seed(inForce.map(toRecord)))
          this.logger.warn(
            `the Redis consumer store was gone: re-seeded it with the ${inForce.length} consumer(s) in force`,
          );
        snap = await repo.snapshot();
      }
      if (snap.version === this.version && !boot) {
        this.retries = 0;
        return;
      }
      const list = this.parseSnapshot(snap.values);
      const before = this.version;
      this.install(list, snap.version);
      if (boot || before !== 0 || snap.version !== 0)
        this.logger.log(`consumers in force: ${list.length} (store version ${snap.version})`);
    } catch (e) {
      this.noteFailure(e instanceof ConsumersFileError ? e.message : `Redis: ${(e as Error).message}`);
    }
  }

  /** One warning per distinct failure (an outage fails every poll), and the state the admin API shows. */
  private noteFailure(why: string): void {
    if (this.lastError !== why)
      this.logger.warn(`consumers not reloaded (${why}); keeping the ${this.store.all().length} in force`);
    this.lastError = why;
    const recheck = this.recheck;
    if (!recheck || this.retry || this.retries >= QUICK_RETRIES) return;
    this.retries++;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void recheck();
    }, RETRY_MS);
    this.retry.unref();
  }

  // --- File ----------------------------------------------------------------------------------------

  /** Re-reads the file; an invalid one is refused and the set in force stays. */
  reloadFile(why: string): void {
    const path = this.config.consumersFile;
    if (!path) return;
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      // loadConsumersFile below reports it.
    }
    if (text !== undefined && digestOf(text) === this.fileDigest && why !== 'SIGHUP') return;
    try {
      const list = loadConsumersFile(path, this.known);
      const before = new Map(this.store.all().map((c) => [c.id, toRecord(c)]));
      this.install(list, this.version + 1);
      this.fileDigest = text === undefined ? undefined : digestOf(text);
      const added = list.filter((c) => !before.has(c.id)).map((c) => c.id);
      const changed = list
        .filter((c) => before.has(c.id) && JSON.stringify(before.get(c.id)) !== JSON.stringify(toRecord(c)))
        .map((c) => c.id);
      const removed = [...before.keys()].filter((id) => !list.some((c) => c.id === id));
      this.logger.log(
        `consumers file reloaded (${why}): ${list.length} consumer(s); added [${added.join(', ')}], ` +
          `changed [${changed.join(', ')}], removed [${removed.join(', ')}]`,
      );
    } catch (e) {
      const msg = e instanceof ConsumersFileError ? e.message : (e as Error).message;
      this.lastError = msg;
      this.fileDigest = text === undefined ? undefined : digestOf(text);
      this.logger.error(
        `consumers file refused (${why}): ${msg}; the ${this.store.all().length} consumer(s) in force stay`,
      );
    }
  }
}
