/**
 * Looks for secrets and contact values in clear: in a dump of every text, json and array column of
 * every table of a schema, and in process logs.
 */
export interface Needle {
  kind: 'api key' | 'webhook secret' | 'email' | 'phone' | 'telegram chat id' | 'credential';
  value: string;
}

export interface Leak {
  kind: Needle['kind'];
  value: string;
  where: string;
  context: string;
}

type Query = (sql: string) => Promise<Array<Record<string, any>>>;

/** Every non-null text-like value of every table in the current schema, labelled table.column. */
export async function dumpSchema(query: Query): Promise<Array<{ where: string; text: string }>> {
  const columns = await query(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY')
     ORDER BY table_name, ordinal_position`,
  );
  const out: Array<{ where: string; text: string }> = [];
  for (const { table_name: table, column_name: column } of columns) {
    const rows = await query(`SELECT "${column}"::text AS v FROM "${table}" WHERE "${column}" IS NOT NULL`);
    for (const row of rows) out.push({ where: `${table}.${column}`, text: String(row.v) });
  }
  return out;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Patterns for one needle: numbers must stand alone (not inside a longer number), emails match in any case. */
function patterns(needle: Needle): RegExp[] {
  if (needle.kind === 'email') return [new RegExp(escape(needle.value), 'i')];
  if (needle.kind === 'phone') {
    const digits = needle.value.replace(/\D/g, '');
    return [new RegExp(escape(needle.value)), new RegExp(`(?<!\\d)${digits}(?!\\d)`)];
  }
  if (needle.kind === 'telegram chat id') return [new RegExp(`(?<![\\w-])${escape(needle.value)}(?![\\w-])`)];
  // An all-digit value (a verification code) counts only as a number of its own: six digits
  // inside a 77-digit field element of a verification key are not that code.
  if (/^\d+$/.test(needle.value)) return [new RegExp(`(?<!\\d)${needle.value}(?!\\d)`)];
  return [new RegExp(escape(needle.value))];
}

export function findLeaks(texts: Array<{ where: string; text: string }>, needles: Needle[]): Leak[] {
  const leaks: Leak[] = [];
  const compiled = needles.map((needle) => ({ needle, patterns: patterns(needle) }));
  for (const { where, text } of texts) {
    for (const { needle, patterns: list } of compiled) {
      for (const pattern of list) {
        const match = pattern.exec(text);
        if (!match) continue;
        leaks.push({ kind: needle.kind, value: needle.value, where, context: text.slice(Math.max(0, match.index - 60), match.index + needle.value.length + 60) });
        break;
      }
    }
  }
  return leaks;
}
