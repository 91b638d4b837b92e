/**
 * A gateway started while PostgreSQL is unreachable waits for it, and starts once it answers; a
 * wrong database name, user or schema still fails at once, naming DATABASE_URL.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { ADMIN_TOKEN, ENCRYPTION_KEY, freshSchema, onPostgres, waitFor } from '../support/gateway.js';
import { ensureBuilt, killStrays, spawnServer } from './server-process.js';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP relay from `port` to PostgreSQL: the database "comes back" when it starts listening. */
function relay(port: number, target: URL): Promise<net.Server> {
  const server = net.createServer((socket) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

describe('start-up with PostgreSQL unreachable', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  ensureBuilt();
  after(killStrays);

  it('waits for the database, logging each try, and starts once it answers', async () => {
    const schema = await freshSchema();
    const port = await freePort();
    const target = new URL(schema.url);
    const unreachable = new URL(schema.url);
    unreachable.hostname = '127.0.0.1';
    unreachable.port = String(port);
    let up: net.Server | undefined;
    const server = spawnServer({ DATABASE_URL: unreachable.toString(), HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY, HERALD_ADMIN_TOKEN: ADMIN_TOKEN, HERALD_ROLE: 'api' });
    try {
      const waits = () => server.stdout().split('\n').filter((line) => line.includes('database unreachable at start-up')).length;
      await waitFor(async () => (waits() >= 2 ? true : undefined), 10_000);
      assert.equal(server.child.exitCode, null, 'still running while the database is away');
      up = await relay(port, target);
      const url = await server.listening(20_000);
      const health = await fetch(`${url}/health`);
      assert.equal(health.status, 200);
      assert.match(server.stdout(), /"msg":"database reachable; starting"/);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
      up?.close();
      await schema.drop();
    }
  });

  it('fails at once, naming DATABASE_URL, for a database, user or schema that does not exist', async () => {
    const database = new URL(process.env.DATABASE_URL!);
    database.pathname = '/herald_no_such_database';
    const user = new URL(process.env.DATABASE_URL!);
    user.username = 'herald_no_such_user';
    const schema = new URL(process.env.DATABASE_URL!);
    schema.searchParams.set('options', '-c search_path=herald_no_such_schema');
    const cases: [URL, RegExp][] = [
      [database, /^Invalid configuration: DATABASE_URL names a database that does not exist \(database "herald_no_such_database" does not exist\)\n$/],
      [user, /^Invalid configuration: DATABASE_URL was refused by PostgreSQL \(.*herald_no_such_user.*\)\n$/],
      [schema, /^Invalid configuration: DATABASE_URL selects no existing schema \(.*\): create the schema its search_path names first\n$/],
    ];
    for (const [url, message] of cases) {
      const server = spawnServer({ DATABASE_URL: url.toString(), HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY, HERALD_ADMIN_TOKEN: ADMIN_TOKEN });
      const exit = await server.exited;
      assert.equal(exit.code, 1, url.toString());
      assert.match(server.stderr(), message);
    }
  });
});
