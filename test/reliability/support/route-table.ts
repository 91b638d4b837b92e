/**
 * The gateway's route table, read from its OpenAPI document (plus the routes the document hides),
 * and plausible values for a route's body schema, so generated requests can reach past validation.
 */
export type Schema = Record<string, any>;

export interface RouteSpec {
  method: string;
  /** OpenAPI path, `{param}` placeholders. */
  path: string;
  query: string[];
  body?: Schema;
}

export interface Fixtures {
  apiKey: string;
  sandboxKey: string;
  adminToken: string;
  wallet: string;
  /** Real ids of every kind, so some requests reach past the lookups. */
  ids: string[];
  receiverUrl: string;
}

/** Routes the OpenAPI document leaves out (signed-link pages and the document itself). */
const HIDDEN: RouteSpec[] = [
  { method: 'GET', path: '/track/open/{token}', query: [] },
  { method: 'GET', path: '/track/click/{token}', query: [] },
  { method: 'GET', path: '/unsubscribe/{token}', query: [] },
  { method: 'POST', path: '/unsubscribe/{token}', query: [] },
  { method: 'GET', path: '/openapi.json', query: [] },
];

export function routesFrom(doc: Schema): RouteSpec[] {
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref ? resolve(doc.components?.schemas?.[String(schema.$ref).split('/').pop()!]) : schema;
  const routes: RouteSpec[] = [];
  for (const [path, operations] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(operations)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      routes.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p: Schema) => p.in === 'query').map((p: Schema) => p.name),
        body: resolve(op.requestBody?.content?.['application/json']?.schema),
      });
    }
  }
  return [...routes, ...HIDDEN];
}

const HINTS: Record<string, (fx: Fixtures) => unknown> = {
  url: (fx) => fx.receiverUrl,
  events: () => ['notification.delivered'],
  channels: () => ['email'],
  channel: () => 'email',
  email: () => 'fuzz@example.com',
  phone: () => '+15555550100',
  cronExpr: () => '0 9 * * *',
  timezone: () => 'UTC',
  scheduledFor: () => new Date(Date.now() + 86_400_000).toISOString(),
  telegramChatId: () => '5550001',
};

/** A plausible value for `schema` (the first enum value, hints by field name, minimal sizes). */
export function sampleOf(schema: Schema | undefined, fx: Fixtures, name = ''): unknown {
  if (!schema) return undefined;
  if (HINTS[name]) return HINTS[name](fx);
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf ?? schema.oneOf) return sampleOf((schema.anyOf ?? schema.oneOf).find((s: Schema) => s.type !== 'null'), fx, name);
  switch (schema.type) {
    case 'string':
      if (schema.format === 'solana-wallet') return fx.wallet;
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (schema.format === 'date') return new Date().toISOString().slice(0, 10);
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [sampleOf(schema.items, fx)];
    case 'object':
      return Object.fromEntries(Object.entries<Schema>(schema.properties ?? {}).map(([key, sub]) => [key, sampleOf(sub, fx, key)]));
    default:
      return 'x';
  }
}
