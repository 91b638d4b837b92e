import { randomBytes } from 'node:crypto';
import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, Logger } from 'pino';

/**
 * A request's logger, made only when the request logs something. Fastify gives every request a
 * child logger bound to its request id; building a pino child (bindings serialised, redaction
 * set up) costs more than the rest of a cheap request's middleware, and almost no request ever
 * logs. A call at a level the parent has disabled never builds it.
 */
export class RequestLogger {
  private built: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.built ??= this.parent.child(this.bindings, this.options));
  }

  private at(level: Level, args: unknown[]) {
    // A per-request level (a route's logLevel) must be asked of the child itself.
    if (this.built || this.options.level || this.parent.isLevelEnabled(level)) (this.real[level] as (...a: unknown[]) => void).apply(this.real, args);
  }

  get level(): LevelWithSilentOrString {
    return this.built?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.real.level = level;
  }

  isLevelEnabled(level: LevelWithSilentOrString): boolean {
    return this.real.isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  // Prototype methods: nothing is allocated per request until something is logged.
  fatal(...args: unknown[]) {
    this.at('fatal', args);
  }
  error(...args: unknown[]) {
    this.at('error', args);
  }
  warn(...args: unknown[]) {
    this.at('warn', args);
  }
  info(...args: unknown[]) {
    this.at('info', args);
  }
  debug(...args: unknown[]) {
    this.at('debug', args);
  }
  trace(...args: unknown[]) {
    this.at('trace', args);
  }
  silent() {}
}

/**
 * Request ids: the caller's `X-Request-Id` when it is a short token, otherwise this process's
 * random prefix and a counter (unique across processes, and cheaper than a UUID per request).
 */
export function requestIdGenerator(): (given: unknown) => string {
  const prefix = randomBytes(6).toString('hex');
  let next = 0;
  return (given) => (typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : `${prefix}-${(next++).toString(36)}`);
}
