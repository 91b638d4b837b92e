import pg from 'pg';

const RETRY_MIN_MS = 250;
// A reconnect try per second at most while the database is away; a wake-up is missed for at most that long after it returns.
const RETRY_MAX_MS = 1000;

/**
 * LISTENs on `channel` over a dedicated pooled connection, and keeps listening: when the
 * connection drops (a database restart or a network cut), the dead client is discarded and a new
 * one LISTENs again, retrying with backoff until the database answers. Notifications sent while no
 * connection listens are lost; the loops they wake also poll. The first LISTEN must succeed.
 * Returns the function that stops listening.
 */
export async function listenPostgres(pool: pg.Pool, channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
  const sql = (verb: string) => `${verb} ${pg.escapeIdentifier(channel)}`;
  let current: { client: pg.PoolClient; drop: () => void } | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;

  async function connect(): Promise<void> {
    const next = await pool.connect();
    let gone = false;
    // Also the way a stopped listener lets go of its connection (it is never reused: it listened).
    const lost = () => {
      if (gone) return;
      gone = true;
      if (current?.client === next) current = undefined;
      next.release(true);
      if (!stopped) schedule();
    };
    next.on('error', lost);
    next.on('end', lost);
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    try {
      await next.query(sql('LISTEN'));
    } catch (error) {
      lost();
      throw error;
    }
    current = { client: next, drop: lost };
  }

  function schedule() {
    if (retry || stopped) return;
    const delay = Math.min(RETRY_MIN_MS * 2 ** failures, RETRY_MAX_MS);
    failures += 1;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(
        () => {
          failures = 0;
        },
        // connect() has already scheduled the next try when the connection failed after opening.
        () => schedule(),
      );
    }, delay);
    retry.unref();
  }

  try {
    await connect();
  } catch (error) {
    stopped = true;
    clearTimeout(retry);
    throw error;
  }
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const listening = current;
    if (!listening) return;
    await listening.client.query(sql('UNLISTEN')).catch(() => {});
    listening.drop();
  };
}
