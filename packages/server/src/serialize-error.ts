import pino from 'pino';

/**
 * pino's error serializer, made safe for errors it cannot serialize. It tags the errors it walks
 * with a symbol property, which throws on a frozen error (@solana/kit freezes its own): the log call
 * then threw, and whatever the caller meant to do after logging (retry, fail a job) never ran.
 * Such errors are logged by name, message, code and stack instead.
 */
export function serializeError(error: unknown): unknown {
  try {
    return pino.stdSerializers.err(error as Error);
  } catch {
    const e = error as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown } | null;
    return {
      type: typeof e?.name === 'string' ? e.name : typeof error,
      message: typeof e?.message === 'string' ? e.message : String(error),
      ...(typeof e?.code === 'string' || typeof e?.code === 'number' ? { code: e.code } : {}),
      ...(typeof e?.stack === 'string' ? { stack: e.stack } : {}),
    };
  }
}
