import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp, buildHealthApp, type ExtraRoutes } from './app.js';
import { randomToken } from './auth/api-keys.js';
import { Authenticator, listenForKeyChanges } from './auth/authenticator.js';
import { ADMIN_TOKEN_TEXT, ConfigError, type Config } from './config.js';
import { checkEncryptionKey } from './crypto/key-check.js';
import { SecretBox } from './crypto/secret-box.js';
import { isDatabaseUnavailable, openPglite, openPostgres, type Database } from './db/connection.js';
import { DataDirLockedError, lockDataDir } from './db/data-dir-lock.js';
import { migrate } from './db/migrate.js';
import type { Deps } from './deps.js';
import { MemoryCounter, RateLimiter, RedisCounter } from './limits/rate-limiter.js';
import { RequestLog } from './request-log/request-log.js';
import { ChannelRegistry } from './channels/registry.js';
import { buildLiveProviders } from './channels/build-providers.js';
import type { JobLoop } from './jobs/loop.js';
import { Wakeup } from './jobs/wakeup.js';
import { webhookLoop } from './webhooks/webhook-loop.js';
import { DeliveryEstimator } from './notifications/delivery-estimate.js';
import { SendingChannels } from './delivery/sending-channels.js';
import { createDeliveryWorker } from './delivery/worker.js';
import { createScheduleWorker } from './schedules/schedule-worker.js';
import { receiptLoop } from './receipts/receipt-loop.js';
import { requestLogCompactor } from './request-log/compact-segments.js';
import { serializeError } from './serialize-error.js';

export interface Herald {
  deps: Deps;
  app: FastifyInstance | undefined;
  /** The address the API listens on (api role), or the worker's health check (HERALD_HEALTH_PORT). */
  url: string | undefined;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  now?: () => Date;
  /** Printed once: the generated admin token of a fresh embedded data dir. */
  announce?: (line: string) => void;
  /** Routes added to the API (see ExtraRoutes); the benchmarks add a do-nothing /v1 route. */
  routes?: ExtraRoutes;
  /**
   * Stops the start between its steps (StartInterrupted): never inside one, so opening a new
   * embedded store or migrating a database is never cut in the middle.
   */
  signal?: AbortSignal;
}

/** A start stopped by StartOptions.signal: what it had opened is closed again. */
export class StartInterrupted extends Error {
  constructor() {
    super('start-up interrupted');
    this.name = 'StartInterrupted';
  }
}

/** Between two steps of the start: stops it there when its signal has been given. */
function stopIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new StartInterrupted();
}

/** The gateway's logger: JSON lines on stdout, or on `destination` (tests read them there). */
export function createLogger(config: Config, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    base: { service: 'herald', role: config.role },
    redact: { paths: ['req.headers.authorization', '*.apiKey', '*.secret', '*.token', '*.email', '*.phone'], censor: '[redacted]' },
    serializers: { err: serializeError },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Reads a secret file of the embedded data dir, or creates it (0600) with `make()`. A file that
 * does not hold what `valid` expects (`what`) stops the start, naming it.
 */
function embeddedSecret(
  dir: string,
  file: string,
  make: () => string,
  check: { valid: (value: string) => boolean; what: string },
): { value: string; created: boolean } {
  const target = path.join(dir, file);
  if (existsSync(target)) {
    const value = readFileSync(target, 'utf8').trim();
    if (!check.valid(value)) throw new ConfigError('HERALD_DATA_DIR', `holds ${target}, which is not ${check.what}: restore it, or remove it to have a new one made`);
    return { value, created: false };
  }
  const value = make();
  writeFileSync(target, value + '\n', { mode: 0o600 });
  return { value, created: true };
}

/** How long closing waits for requests still running after the server has stopped accepting. */
const IN_FLIGHT_GRACE_MS = 10_000;

/** Every background loop of the worker role. */
function backgroundLoops(deps: Deps): JobLoop[] {
  const delivery = deps.config.delivery;
  // The delivery loops share each channel's lanes and room (see SendingChannels).
  const channels = new SendingChannels(delivery.concurrency, delivery.batchSize);
  return [
    ...Array.from({ length: delivery.loops }, () => createDeliveryWorker(deps, delivery, channels)),
    createScheduleWorker(deps),
    webhookLoop(deps),
    receiptLoop(deps),
    requestLogCompactor(deps),
  ];
}

/** lockDataDir, with a directory that cannot be used reported as the setting that names it. */
function lockOwnDataDir(dir: string): () => void {
  try {
    return lockDataDir(dir);
  } catch (error) {
    if (error instanceof DataDirLockedError) throw error;
    // Not a directory, not writable, out of space.
    throw new ConfigError('HERALD_DATA_DIR', `cannot be used: "${dir}" is not a writable directory (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/**
 * Listens on HOST:PORT; an address that cannot be taken is a configuration error naming the
 * variable (startHerald closes the app on any failure).
 */
async function listen(app: FastifyInstance, config: Config, port = { name: 'PORT', value: config.port }): Promise<string> {
  try {
    return await app.listen({ port: port.value, host: config.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(port.name, `${port.value} is already in use on ${config.host}`);
    if (code === 'EACCES') throw new ConfigError(port.name, `${port.value} on ${config.host} needs privileges this process does not have`);
    if (code === 'EADDRNOTAVAIL') throw new ConfigError('HOST', `"${config.host}" is not an address of this machine`);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') throw new ConfigError('HOST', `"${config.host}" could not be resolved (${code})`);
    throw error;
  }
}

/**
 * What a refusal from PostgreSQL at start-up says about DATABASE_URL, as the other settings' errors
 * say it (exit 1 naming the variable, no stack): a database, user or schema that does not exist,
 * a refused password, a host that does not resolve. Other errors are returned as they are.
 */
function asDatabaseUrlError(error: unknown): unknown {
  const { code, message } = error as { code?: unknown; message?: string };
  if (typeof code !== 'string') return error;
  if (code === 'ENOTFOUND') return new ConfigError('DATABASE_URL', `names a host that could not be resolved (${message})`);
  if (code === '3D000') return new ConfigError('DATABASE_URL', `names a database that does not exist (${message})`);
  if (code.startsWith('28')) return new ConfigError('DATABASE_URL', `was refused by PostgreSQL (${message})`);
  // A search_path naming no existing schema leaves migrations nowhere to create their tables.
  if (code === '3F000') return new ConfigError('DATABASE_URL', `selects no existing schema (${message}): create the schema its search_path names first`);
  return error;
}

/**
 * Waits for PostgreSQL at start-up: a process started during an outage, or before the database
 * (a restart after a crash, containers started together), starts once it answers instead of
 * exiting, as the running loops ride out an outage (isDatabaseUnavailable, which answers 503 in
 * the API). A wrong password or database name still fails at once, and so does a host name that
 * does not resolve, at start-up more often a mistyped DATABASE_URL than an outage. Tries every
 * 0.25 s, doubling up to 5 s, with a warning each time.
 */
async function untilReachable(db: Database, log: Logger, signal?: AbortSignal): Promise<void> {
  for (let failures = 0; ; failures++) {
    stopIfInterrupted(signal);
    try {
      await db.query('SELECT 1');
      if (failures > 0) log.info({ failures }, 'database reachable; starting');
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error) || (error as { code?: unknown }).code === 'ENOTFOUND') throw asDatabaseUrlError(error);
      const retryInMs = Math.min(5000, 250 * 2 ** failures);
      log.warn({ err: error, failures: failures + 1, retryInMs }, 'database unreachable at start-up; waiting for it');
      // Cut short by the signal, which the next turn of the loop answers.
      await sleep(retryInMs, undefined, { signal }).catch(() => {});
    }
  }
}

/** Opens storage, applies migrations, builds the roles asked for, and starts listening. */
export async function startHerald(config: Config, options: StartOptions = {}): Promise<Herald> {
  const log = options.logger ?? createLogger(config);
  const announce = options.announce ?? ((line: string) => process.stdout.write(line + '\n'));
  const embedded = !config.databaseUrl;
  const inMemory = config.dataDir === 'memory://';
  const release = embedded && !inMemory ? lockOwnDataDir(config.dataDir) : () => {};
  let db: Database | undefined;
  let app: FastifyInstance | undefined;
  const step = () => stopIfInterrupted(options.signal);
  try {
    step();
    let encryptionKey = config.encryptionKey;
    let adminToken = config.adminToken;
    // An in-memory token dies with the process: it is shown once the process serves, not before a
    // start that fails (a port in use, say). A data dir's token is kept, and shown as it is made.
    let memoryTokenLine: string | undefined;
    if (embedded) {
      if (inMemory) {
        encryptionKey ??= randomBytes(32);
        if (!adminToken && config.role !== 'worker') {
          adminToken = `hrld_admin_${randomToken()}`;
          memoryTokenLine = `Herald admin token (in memory: valid until this process exits): ${adminToken}`;
        }
      } else {
        mkdirSync(config.dataDir, { recursive: true });
        // A key made for a database that has one already could not open what it sealed.
        if (!encryptionKey && existsSync(path.join(config.dataDir, 'pgdata')) && !existsSync(path.join(config.dataDir, 'encryption.key'))) {
          throw new ConfigError(
            'HERALD_DATA_DIR',
            `holds a database but no encryption.key, whose key sealed its contacts: restore ${path.join(config.dataDir, 'encryption.key')}, or give that key as HERALD_ENCRYPTION_KEY`,
          );
        }
        encryptionKey ??= Buffer.from(
          embeddedSecret(config.dataDir, 'encryption.key', () => randomBytes(32).toString('hex'), { valid: (value) => /^[0-9a-fA-F]{64}$/.test(value), what: 'a key of 64 hex characters' }).value,
          'hex',
        );
        if (!adminToken) {
          const token = embeddedSecret(config.dataDir, 'admin-token', () => `hrld_admin_${randomToken()}`, {
            valid: (value) => value.length >= 16 && ADMIN_TOKEN_TEXT.test(value),
            what: 'an admin token (at least 16 characters of printable ASCII, no whitespace)',
          });
          adminToken = token.value;
          if (token.created) {
            announce(`Herald admin token (shown once, kept in ${path.join(config.dataDir, 'admin-token')}): ${token.value}`);
          }
        }
      }
    } else if (!adminToken && config.role !== 'worker') {
      log.warn('HERALD_ADMIN_TOKEN is not set: the admin API answers 401');
    }
    // The embedded store serves one process, so no other process can take the roles this one leaves.
    if (embedded && config.role !== 'all') {
      // Every line already names the process's role (the logger's base).
      log.warn(
        config.role === 'api'
          ? 'HERALD_ROLE=api on the embedded store: sends are accepted but nothing delivers them (no worker can open this data dir); use HERALD_ROLE=all, or DATABASE_URL to split roles'
          : 'HERALD_ROLE=worker on the embedded store: nothing can send to it (no API process can open this data dir); use HERALD_ROLE=all, or DATABASE_URL to split roles',
      );
    }
    // The email this process sends carries links to this address (unsubscribe, tracking): readers
    // need them reachable, and RFC 8058's one-click unsubscribe needs HTTPS.
    if (config.smtpUrl && config.role !== 'api' && !config.publicUrl.startsWith('https://')) {
      log.warn(
        { publicUrl: config.publicUrl },
        'SMTP_URL is set but HERALD_PUBLIC_URL is not an https:// address: the unsubscribe and tracking links of real email point to it, and one-click unsubscribe needs HTTPS',
      );
    }
    const effective: Config = { ...config, encryptionKey, adminToken };

    db = config.databaseUrl ? await openPostgres({ url: config.databaseUrl }) : await openPglite(inMemory ? undefined : path.join(config.dataDir, 'pgdata'));
    if (config.databaseUrl) await untilReachable(db, log, options.signal);
    step();
    const applied = await migrate(db).catch((error: unknown) => {
      throw config.databaseUrl ? asDatabaseUrlError(error) : error;
    });
    if (applied.length) log.info({ applied }, 'database migrated');
    step();

    const secrets = new SecretBox(encryptionKey!);
    await checkEncryptionKey(db, secrets);
    step();

    const counter = config.redisUrl ? new RedisCounter(config.redisUrl, config.redisPrefix, log) : new MemoryCounter();
    if (counter instanceof RedisCounter) await counter.connected();
    const deps: Deps = {
      config: effective,
      db,
      log,
      secrets,
      authenticator: new Authenticator(db, config.authCacheMs),
      limiter: new RateLimiter(counter),
      requestLog: new RequestLog(db, config.requestLogFlushMs, log),
      channels: new ChannelRegistry(db, buildLiveProviders(config, log)),
      wakeup: new Wakeup(db),
      estimator: new DeliveryEstimator(db),
      now: options.now ?? (() => new Date()),
    };

    let url: string | undefined;
    if (config.role !== 'worker') {
      await listenForKeyChanges(db, deps.authenticator);
      // This role answers /health on PORT, with the API.
      if (config.healthPort !== undefined) log.warn('HERALD_HEALTH_PORT is for the worker role only: ignored');
      app = await buildApp(deps, options.routes);
      url = await listen(app, config);
      if (memoryTokenLine) announce(memoryTokenLine);
      log.info({ url, database: db.engine, ...(embedded ? { dataDir: inMemory ? 'memory://' : path.resolve(config.dataDir) } : {}) }, 'herald listening');
    } else if (config.healthPort !== undefined) {
      app = await buildHealthApp(deps);
      url = await listen(app, config, { name: 'HERALD_HEALTH_PORT', value: config.healthPort });
      log.info({ url, database: db.engine }, 'herald worker health listening');
    }

    // Background loops run in the worker role (and in `all`); each claims its rows with claimDue.
    // They start last, so nothing that can still fail leaves them running on closed storage.
    const loops: JobLoop[] = config.role === 'api' ? [] : backgroundLoops(deps);
    if (loops.length) {
      await deps.wakeup.listen();
      for (const loop of loops) loop.start();
      log.info({ loops: loops.length, database: db.engine }, 'herald background loops running');
    }

    let closing: Promise<void> | undefined;
    const openDb = db;
    return {
      deps,
      app,
      url,
      close() {
        closing ??= (async () => {
          await app?.close();
          // Handlers of requests whose clients went away are still running: storage stays open for them.
          if (app && !(await app.inFlight.settled(IN_FLIGHT_GRACE_MS))) {
            log.warn({ requests: app.inFlight.size }, 'closing with requests still running');
          }
          await Promise.all(loops.map((loop) => loop.stop()));
          await deps.wakeup.close();
          await deps.channels.close();
          await deps.requestLog.flush();
          await deps.limiter.close();
          await openDb.close();
          release();
        })();
        return closing;
      },
    };
  } catch (error) {
    // Listening already (a later step failed): stop taking requests on storage about to close.
    await app?.close().catch(() => {});
    await db?.close().catch(() => {});
    release();
    throw error;
  }
}
