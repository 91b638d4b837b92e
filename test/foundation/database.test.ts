import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { openPglite } from '../../packages/server/src/db/connection.js';
import { boolArray, int2Array, int4Array, int8Array, jsonbArray, textArray, timestamptzArray } from '../../packages/server/src/db/binary-array.js';
import { withEmptyDatabase } from '../support/database.js';
import { onPostgres } from '../support/gateway.js';

describe('the database connection, on either engine', () => {
  it('answers with the same JS types: numbers for int8 and numeric, Date, Uint8Array, arrays, JSON', async () => {
    await withEmptyDatabase(async (db) => {
      const at = new Date('2026-11-25T10:00:00.123Z');
      const [row] = await db.query(
        `SELECT 9007199254740991::int8 AS big, 1.5::numeric AS num, $1::timestamptz AS at, $2::bytea AS bytes,
                $3::text[] AS texts, $4::jsonb AS doc, NULL::text AS nothing`,
        [at, Buffer.from([0, 1, 254, 255]), ['a', 'b,c', 'd"e'], JSON.stringify({ nested: { list: [1, 'two'] } })],
      );
      assert.equal(row.big, 9007199254740991);
      assert.equal(row.num, 1.5);
      assert.ok(row.at instanceof Date);
      assert.equal(row.at.toISOString(), at.toISOString());
      assert.deepEqual([...row.bytes], [0, 1, 254, 255]);
      assert.deepEqual(row.texts, ['a', 'b,c', 'd"e']);
      assert.deepEqual(row.doc, { nested: { list: [1, 'two'] } });
      assert.equal(row.nothing, null);
    });
  });

  // Arrays holding NULLs come back through to_jsonb: PGlite reads a NULL element of a text[] result as the string 'NULL'.
  it('reads text, jsonb, boolean, timestamptz and nullable integer arrays sent in binary, as their text forms would give', async () => {
    await withEmptyDatabase(async (db) => {
      const long = 'A long ASCII value, written in one call rather than byte by byte: '.repeat(3);
      const texts = ['plain', 'plain', '', '', 'NULL', 'quote " and \\ backslash', '{braces}, commas', 'émoji 🚀 and 中文', 'émoji 🚀 and 中文', long, long, ' padded '];
      const times = [new Date('2026-11-25T10:00:00.123Z'), new Date('1999-12-31T23:59:59.999Z'), new Date('1970-01-01T00:00:00Z')];
      const [row] = await db.query(
        `SELECT $1::text[] AS texts, to_jsonb($2::text[]) AS with_nulls, to_jsonb($3::jsonb[]) AS docs, to_jsonb($4::boolean[]) AS flags,
                $5::timestamptz[] AS times, to_jsonb($6::integer[]) AS versions, $7::text[] AS none, cardinality($7::text[]) AS n,
                (SELECT array_agg(octet_length(t)) FROM unnest($1::text[]) t) AS lengths`,
        [
          textArray(texts),
          textArray(['a', null, undefined, 'b']),
          jsonbArray(['{"k": [1, "two", null]}', null, '"é"', '"é"']),
          boolArray([true, false, null]),
          timestamptzArray(times),
          int4Array([3, null, -1]),
          textArray([]),
        ],
      );
      assert.deepEqual(row.texts, texts);
      assert.deepEqual(row.lengths, texts.map((t) => Buffer.byteLength(t)));
      assert.deepEqual(row.with_nulls, ['a', null, null, 'b']);
      assert.deepEqual(row.docs, [{ k: [1, 'two', null] }, null, 'é', 'é']);
      assert.deepEqual(row.flags, [true, false, null]);
      assert.deepEqual(row.times.map((t: Date) => t.toISOString()), times.map((t) => t.toISOString()));
      assert.deepEqual(row.versions, [3, null, -1]);
      assert.deepEqual(row.none, []);
      assert.equal(row.n, 0);
    });
  });

  it('refuses text with a NUL character in a binary array as it does in text (22021)', async () => {
    await withEmptyDatabase(async (db) => {
      await assert.rejects(db.query('SELECT $1::text[] AS t', [textArray(['ok', 'nul \u0000 inside'])]), (error: { code?: string }) => error.code === '22021');
      const [row] = await db.query<{ ok: number }>('SELECT 1 AS ok');
      assert.equal(row.ok, 1, 'the connection stays usable');
    });
  });

  it('reads number arrays sent in binary (int2Array, int4Array, int8Array), empty ones included', async () => {
    await withEmptyDatabase(async (db) => {
      const [row] = await db.query(
        `SELECT $1::smallint[] AS small, $2::integer[] AS int, ($3::bigint[])::text[] AS big, ($3::bigint[])[2:3]::text[] AS slice,
                $4::integer[] AS empty, cardinality($4::integer[]) AS n`,
        [int2Array([1, -2, 32767, -32768]), int4Array(new Int32Array([5, -7, 2 ** 31 - 1])), int8Array([1795581368800, -1, 2 ** 53 - 1]), int4Array([])],
      );
      assert.deepEqual(row.small, [1, -2, 32767, -32768]);
      assert.deepEqual(row.int, [5, -7, 2147483647]);
      assert.deepEqual(row.big, ['1795581368800', '-1', '9007199254740991']);
      assert.deepEqual(row.slice, ['-1', '9007199254740991']);
      assert.deepEqual(row.empty, []);
      assert.equal(row.n, 0);
    });
  });

  it("reports PostgreSQL's error fields (code, constraint, detail) and stays usable after an error", async () => {
    await withEmptyDatabase(async (db) => {
      await db.exec('CREATE TABLE t (id int PRIMARY KEY, note text)');
      await db.query('INSERT INTO t VALUES (1, $1)', ['first']);
      await assert.rejects(db.query('INSERT INTO t VALUES (1, $1)', ['again']), (error: any) => {
        assert.ok(error instanceof Error);
        assert.equal(error.code, '23505');
        assert.equal(error.constraint, 't_pkey');
        assert.match(error.detail, /Key \(id\)=\(1\) already exists/);
        return true;
      });
      await assert.rejects(db.query('SELECT * FROM missing_table'), { code: '42P01' });
      assert.deepEqual(await db.query('SELECT note FROM t'), [{ note: 'first' }]);
    });
  });

  it('commits a transaction, rolls back one that throws, and reports a failed statement inside it', async () => {
    await withEmptyDatabase(async (db) => {
      await db.exec('CREATE TABLE t (id int PRIMARY KEY)');
      const result = await db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (1)');
        await tx.query('INSERT INTO t VALUES (2)');
        return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM t'))[0].n;
      });
      assert.equal(result, 2);
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES (3)');
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES (4)');
          await tx.query('INSERT INTO t VALUES (1)');
        }),
        { code: '23505' },
      );
      const rows = await db.query<{ id: number }>('SELECT id FROM t ORDER BY id');
      assert.deepEqual(
        rows.map((r) => r.id),
        [1, 2],
      );
      // Statements outside a transaction wait for it rather than seeing its uncommitted rows.
      let inside = 0;
      const tx = db.transaction(async (t) => {
        await t.query('INSERT INTO t VALUES (5)');
        await new Promise((resolve) => setTimeout(resolve, 50));
        inside = (await t.query<{ n: number }>('SELECT count(*)::int AS n FROM t'))[0].n;
      });
      const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
      await tx;
      assert.equal(inside, 3);
      assert.ok(n === 2 || n === 3);
    });
  });

  it('delivers NOTIFY to a listener until it stops listening', async () => {
    await withEmptyDatabase(async (db) => {
      const heard: string[] = [];
      const stop = await db.listen('herald_test_channel', (payload) => heard.push(payload));
      await db.query(`SELECT pg_notify('herald_test_channel', 'one')`);
      const deadline = Date.now() + 5000;
      while (heard.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(heard, ['one']);
      await stop();
      await db.query(`SELECT pg_notify('herald_test_channel', 'two')`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(heard, ['one']);
    });
  });

  it('refuses queries once closed', { skip: onPostgres && 'PGlite only' }, async () => {
    const db = await openPglite(undefined);
    await db.close();
    await assert.rejects(db.query('SELECT 1'), /closed/);
  });

  it('refuses a parameter that cannot cross to the database thread, and stays usable', { skip: onPostgres && 'PGlite only' }, async () => {
    const db = await openPglite(undefined);
    try {
      await assert.rejects(db.query('SELECT $1::text AS v', [() => 'a function']), { name: 'DataCloneError' });
      assert.deepEqual(await db.query('SELECT $1::text AS v', ['fine']), [{ v: 'fine' }]);
    } finally {
      await db.close();
    }
  });

  it('lets a process exit while the embedded database is open and idle', { skip: onPostgres && 'PGlite only' }, () => {
    // A script that opens PGlite, queries and never closes it: its thread must not keep the process alive.
    const script = `
      import { openPglite } from ${JSON.stringify(new URL('../../packages/server/src/db/connection.ts', import.meta.url).href)};
      const db = await openPglite(undefined);
      const [row] = await db.query('SELECT 41 + 1 AS answer');
      console.log(row.answer);`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), '42');
  });
});
