import { readdir, readFile } from 'node:fs/promises';
import type { Database } from './connection.js';

const MIGRATIONS_DIR = new URL('../../migrations/', import.meta.url);
// Any constant works; it only has to be the same for every Herald process sharing a database.
const MIGRATION_LOCK = 7_146_301;

/**
 * Applies the SQL files in migrations/ that this database has not seen, in name order, each in its
 * own transaction. Concurrent starts are serialised by an advisory lock, so re-running is safe.
 */
export async function migrate(db: Database, log?: (message: string) => void): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name));
    for (const name of files) {
      if (done.has(name)) continue;
      const sql = await readFile(new URL(name, MIGRATIONS_DIR), 'utf8');
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      applied.push(name);
      log?.(`applied migration ${name}`);
    }
  });
  return applied;
}

/** Splits a migration on top-level semicolons; dollar-quoted bodies ($$ … $$) are kept whole. */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let inDollar = false;
  for (const line of sql.split('\n')) {
    const trimmed = line.trim();
    if (!inDollar && (trimmed.startsWith('--') || trimmed === '')) continue;
    current += line + '\n';
    if ((line.match(/\$\$/g) ?? []).length % 2 === 1) inDollar = !inDollar;
    if (!inDollar && trimmed.endsWith(';')) {
      statements.push(current.trim());
      current = '';
    }
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}
