import { randomBytes } from 'node:crypto';
import {
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Inject,
  Logger,
  Param,
  Patch,
  Post,
  Req,
} from '@nestjs/common';
import { UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { Public } from '../core/auth/auth.decorators.js';
import type { Consumer } from '../core/auth/consumer.js';
import { CONSUMER_STORE } from '../core/auth/consumer-auth.guard.js';
import {
  ConsumersFileError,
  keyIdOf,
  keysOf,
  parseConsumer,
  sha256,
  toRecord,
  type ConsumerRecord,
} from '../core/auth/consumer-record.js';
import {
  ConsumerRegistry,
  type ConsumerChange,
  type ConsumerSourceState,
} from '../core/auth/consumer-registry.service.js';
import type { ConsumerStore } from '../core/auth/consumer-store.service.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { AdminTokenGuard } from './admin-token.guard.js';
import { consumerView, type ConsumerView } from './consumer-view.js';
import { invalidBody, readJsonObject } from './json-body.js';

/** What an operator may set on a consumer (keys have their own endpoints; the id never changes). */
const SETTABLE = [
  'upstreams',
  'write',
  'limits',
  'weight',
  'reservedShare',
  'corsOrigins',
  'enabled',
  'oidc',
] as const;

export interface ConsumerList extends ConsumerSourceState {
  consumers: ConsumerView[];
}

/** The answer that carries a new key: the only time it is ever shown. */
export interface IssuedKey {
  consumer: ConsumerView;
  keyId: string;
  key: string;
}

/** `atr_` + 256 random bits, as `npm run keygen` makes them. */
function newKey(): string {
  return `atr_${randomBytes(32).toString('base64url')}`;
}

function parseInstant(v: unknown, parameter: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const ms = typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms))
    throw invalidBody(`${parameter} must be an ISO 8601 date-time, e.g. 2030-01-31T12:00:00Z.`, parameter);
  return ms;
}

/** Who made a change: an optional operator-chosen name (`X-Operator-Name`) and the client address. */
function actorOf(req: FastifyRequest): { actor: string; ip: string } {
  const name = req.headers['x-operator-name'];
  const actor = typeof name === 'string' && /^[\w.@ -]{1,64}$/.test(name) ? name.trim() : 'operator';
  return { actor, ip: req.ip };
}

/**
 * Consumers at run time (README "Consumers at run time"): list, get, create, update, disable/enable,
 * delete, and key rotation (add a key, schedule or retire one). Behind the operator token. Every change is
 * validated like the consumers file, applied through the ConsumerRegistry (PostgreSQL and NOTIFY in a
 * fleet, with an audit row in the same transaction) and written to one `Audit` log line: who, what, which fields or key id, never a key or a digest.
 */
@Public()
@UseGuards(AdminTokenGuard)
@Controller('admin/consumers')
export class ConsumersAdminController {
  private readonly audit = new Logger('Audit');
  private readonly known: readonly string[];

  constructor(
    private readonly registry: ConsumerRegistry,
    @Inject(CONSUMER_STORE) private readonly store: ConsumerStore,
    @Inject(ATRIUM_CONFIG) config: AtriumConfig,
  ) {
    this.known = Object.keys(config.upstreams);
  }

  @Get()
  @Header('cache-control', 'no-store')
  list(): ConsumerList {
    const now = this.store.now();
    return {
      ...this.registry.state(),
      consumers: this.store
        .all()
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((c) => consumerView(c, now)),
    };
  }

  @Get(':id')
  @Header('cache-control', 'no-store')
  get(@Param('id') id: string): ConsumerView {
    const c = this.store.get(id);
    if (!c) throw notFound(id);
    return consumerView(c, this.store.now());
  }

  /** Creates a consumer with one fresh key, returned in this answer only (201). */
  @Post()
  @HttpCode(201)
  @Header('cache-control', 'no-store')
  async create(@Req() req: FastifyRequest): Promise<IssuedKey> {
    const body = readJsonObject(req, ['id', ...SETTABLE]);
    const key = newKey();
    const hash = sha256(key);
    const keyId = keyIdOf(hash);
    const now = this.store.now();
    const consumer = this.validate({
      ...(body as Partial<ConsumerRecord>),
      id: body.id as string,
      keys: [{ id: keyId, sha256: hash.toString('hex'), createdAt: new Date(now).toISOString() }],
    } as ConsumerRecord);
    const made = await this.change(
      req,
      consumer.id,
      'consumer.create',
      { fields: Object.keys(body) },
      (cur) => {
        if (cur) throw new GatewayError('CONFLICT', { message: `Consumer "${consumer.id}" already exists.` });
        return consumer;
      },
    );
    return { consumer: consumerView(made!, now), keyId, key };
  }

  @Patch(':id')
  @Header('cache-control', 'no-store')
  async update(@Req() req: FastifyRequest, @Param('id') id: string): Promise<ConsumerView> {
    const body = readJsonObject(req, SETTABLE);
    if (Object.keys(body).length === 0)
      throw invalidBody(`Nothing to change: give one or more of ${SETTABLE.join(', ')}.`);
    const next = await this.change(req, id, 'consumer.update', { fields: Object.keys(body) }, (cur) =>
      this.validate({ ...toRecord(existing(cur, id)), ...(body as Partial<ConsumerRecord>), id }),
    );
    return consumerView(next!, this.store.now());
  }

  @Post(':id/disable')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  async disable(@Req() req: FastifyRequest, @Param('id') id: string): Promise<ConsumerView> {
    return this.setEnabled(req, id, false);
  }

  @Post(':id/enable')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  async enable(@Req() req: FastifyRequest, @Param('id') id: string): Promise<ConsumerView> {
    return this.setEnabled(req, id, true);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Req() req: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.change(req, id, 'consumer.delete', {}, (cur) => {
      existing(cur, id);
      return null;
    });
  }

  /**
   * Adds a key (rotation step 1): both the old and the new key open the gateway until the old one is
   * retired or passes its `expiresAt`. Body: `{"expiresAt": "…"}` (optional, of the NEW key).
   */
  @Post(':id/keys')
  @HttpCode(201)
  @Header('cache-control', 'no-store')
  async addKey(@Req() req: FastifyRequest, @Param('id') id: string): Promise<IssuedKey> {
    const body = readJsonObject(req, ['expiresAt']);
    const now = this.store.now();
    const expiresAt = parseInstant(body.expiresAt, 'expiresAt');
    if (expiresAt !== undefined && expiresAt <= now)
      throw invalidBody('expiresAt must be in the future.', 'expiresAt');
    const key = newKey();
    const hash = sha256(key);
    const keyId = keyIdOf(hash);
    const next = await this.change(req, id, 'consumer.key.add', { keyId }, (cur) => {
      const rec = toRecord(existing(cur, id));
      rec.keys!.push({
        id: keyId,
        sha256: hash.toString('hex'),
        createdAt: new Date(now).toISOString(),
        ...(expiresAt !== undefined ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
      });
      return this.validate(rec);
    });
    return { consumer: consumerView(next!, now), keyId, key };
  }

  /**
   * Schedules a key's end (rotation step 2, with overlap): `{"expiresAt": "…"}`; `null` lifts it. A time in
   * the past ends the key at once, like DELETE.
   */
  @Patch(':id/keys/:keyId')
  @Header('cache-control', 'no-store')
  async expireKey(
    @Req() req: FastifyRequest,
    @Param('id') id: string,
    @Param('keyId') keyId: string,
  ): Promise<ConsumerView> {
    const body = readJsonObject(req, ['expiresAt']);
    if (!('expiresAt' in body))
      throw invalidBody('expiresAt is required (an ISO date-time, or null).', 'expiresAt');
    const expiresAt = parseInstant(body.expiresAt, 'expiresAt');
    const now = this.store.now();
    const next = await this.change(
      req,
      id,
      'consumer.key.expire',
      { keyId, expiresAt: expiresAt === undefined ? null : new Date(expiresAt).toISOString() },
      (cur) => {
        const rec = toRecord(existing(cur, id));
        const k = rec.keys!.find((e) => e.id === keyId);
        if (!k) throw keyNotFound(id, keyId);
        if (expiresAt === undefined) delete k.expiresAt;
        else k.expiresAt = new Date(expiresAt).toISOString();
        const c = this.validate(rec);
        this.keepOneKey(c, now);
        return c;
      },
    );
    return consumerView(next!, now);
  }

  /** Retires a key now (rotation step 2 without overlap, or a leaked key): it is refused at once, fleet-wide. */
  @Delete(':id/keys/:keyId')
  @Header('cache-control', 'no-store')
  async retireKey(
    @Req() req: FastifyRequest,
    @Param('id') id: string,
    @Param('keyId') keyId: string,
  ): Promise<ConsumerView> {
    const now = this.store.now();
    const next = await this.change(req, id, 'consumer.key.retire', { keyId }, (cur) => {
      const rec = toRecord(existing(cur, id));
      const before = rec.keys!.length;
      rec.keys = rec.keys!.filter((e) => e.id !== keyId);
      if (rec.keys.length === before) throw keyNotFound(id, keyId);
      if (rec.keys.length === 0 && !rec.oidc) throw lastKey(id);
      const c = this.validate(rec);
      this.keepOneKey(c, now);
      return c;
    });
    return consumerView(next!, now);
  }

  private async setEnabled(req: FastifyRequest, id: string, enabled: boolean): Promise<ConsumerView> {
    const next = await this.change(req, id, enabled ? 'consumer.enable' : 'consumer.disable', {}, (cur) =>
      this.validate({ ...toRecord(existing(cur, id)), enabled }),
    );
    return consumerView(next!, this.store.now());
  }

  /**
   * A consumer left with only expired keys could never call again: refused, like retiring the last key. One
   * that accepts end-user tokens still can.
   */
  private keepOneKey(c: Consumer, now: number): void {
    if (c.tokens) return;
    if (!keysOf(c).some((k) => k.expiresAt === undefined || k.expiresAt > now)) throw lastKey(c.id);
  }

  /** The consumers file's own validation, its messages made admin-API messages. */
  private validate(record: ConsumerRecord): Consumer {
    try {
      return parseConsumer(record, 0, this.known);
    } catch (e) {
      if (e instanceof ConsumersFileError) throw invalidBody(e.message.replace(/^consumers file: /, ''));
      throw e;
    }
  }

  private async change(
    req: FastifyRequest,
    id: string,
    action: string,
    detail: Record<string, unknown>,
    fn: ConsumerChange,
  ): Promise<Consumer | null> {
    let result: Consumer | null;
    try {
      // With a database the audit row is written in the change's own transaction.
      result = await this.registry.change(id, fn, { ...actorOf(req), action, detail });
    } catch (e) {
      if (e instanceof ConsumersFileError) throw invalidBody(e.message.replace(/^consumers file: /, ''));
      throw e;
    }
    this.audit.log({ message: action, ...actorOf(req), action, consumer: id, ...detail });
    return result;
  }
}

function notFound(id: string): GatewayError {
  return new GatewayError('NOT_FOUND', { message: `No consumer "${id}".` });
}

function keyNotFound(id: string, keyId: string): GatewayError {
  return new GatewayError('NOT_FOUND', { message: `Consumer "${id}" has no key "${keyId}".` });
}

function lastKey(id: string): GatewayError {
  return new GatewayError('CONFLICT', {
    message: `Consumer "${id}" would be left without a usable key: add a key first, or disable or delete the consumer.`,
  });
}

function existing(cur: Consumer | undefined, id: string): Consumer {
  if (!cur) throw notFound(id);
  return cur;
}
