/**
 * fast-check arbitraries for requests a well-behaved client would never send, aimed at every route
 * of the OpenAPI document (plus the routes it hides): wrong types, missing and extra fields, huge
 * and deeply nested bodies, odd unicode, invalid UTF-8, bad content types and lengths, garbage
 * Authorization headers, bad ids and query strings.
 */
import fc from 'fast-check';
import type { RawRequest } from './raw-http.js';
import { sampleOf, type Fixtures, type RouteSpec } from './route-table.js';

const ODD = [
  '\u0000', 'a\u0000b', '\ud800', '\udfff\ud800', '\u202eevil', '\ufeff', '👩‍👩‍👧‍👦', 'e\u0301\u0301\u0301', 'İı', '𝕳𝖊𝖗𝖆𝖑𝖉',
  '<script>alert(1)</script>', '{{constructor.constructor}}', '${7*7}', "'; DROP TABLE notifications; --", '%00', '../../etc/passwd', ' ', '',
];

export const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(...ODD),
  fc.integer({ min: 1000, max: 100_000 }).map((n) => 'x'.repeat(n)),
);

const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 1e20, -1e20, 1e308, 0.5, -0),
  fc.double(),
  fc.constant(null),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  oddString,
  fc.array(oddString, { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 3 }),
);

const extraKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'));

/** Sets an own property, `__proto__` included, so JSON.stringify writes it. */
function put(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mutated(valid: unknown): fc.Arbitrary<string> {
  const keys = valid && typeof valid === 'object' && !Array.isArray(valid) ? Object.keys(valid) : [];
  const key = keys.length ? fc.oneof(fc.constantFrom(...keys), extraKey) : extraKey;
  return fc
    .record({ drop: fc.subarray(keys), set: fc.array(fc.tuple(key, wrongValue), { maxLength: 3 }) })
    .map(({ drop, set }) => {
      const body: Record<string, unknown> = {};
      for (const k of keys) if (!drop.includes(k)) put(body, k, (valid as Record<string, unknown>)[k]);
      for (const [k, v] of set) put(body, k, v);
      return JSON.stringify(body);
    });
}

function bodyFor(route: RouteSpec, fx: Fixtures): fc.Arbitrary<Buffer | undefined> {
  const valid = sampleOf(route.body, fx) ?? {};
  const text = JSON.stringify(valid);
  const asBuffer = (s: string) => Buffer.from(s, 'utf8');
  return fc.oneof(
    { weight: 6, arbitrary: mutated(valid).map(asBuffer) },
    { weight: 2, arbitrary: fc.constant(asBuffer(text)) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => asBuffer(JSON.stringify(v))) },
    { weight: 1, arbitrary: fc.integer({ min: 20, max: 50_000 }).map((d) => asBuffer(`{"templateVariables":${'['.repeat(d)}${']'.repeat(d)}}`)) },
    { weight: 1, arbitrary: fc.integer({ min: 20, max: 5_000 }).map((d) => asBuffer(`${'{"a":'.repeat(d)}1${'}'.repeat(d)}`)) },
    // Around the 1 MB body limit, on both sides.
    { weight: 1, arbitrary: fc.integer({ min: 900_000, max: 1_200_000 }).map((n) => asBuffer(JSON.stringify({ ...(valid as object), body: 'y'.repeat(n) }))) },
    {
      weight: 2,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 64 })
        .map((bytes) => Buffer.concat([asBuffer(text.slice(0, -1) + (text.length > 2 ? ',' : '') + '"subject":"'), Buffer.from(bytes), asBuffer('"}')])),
    },
    { weight: 1, arbitrary: fc.nat({ max: Math.max(0, text.length - 1) }).map((n) => asBuffer(text.slice(0, n))) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map(asBuffer) },
    { weight: 2, arbitrary: fc.constant(undefined) },
  );
}

function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

const pathValue = (fx: Fixtures) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...fx.ids).map(encodeSegment) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).map(encodeSegment) },
    { weight: 2, arbitrary: fc.constantFrom('%00', '%FF%FE', '%', '%zz', '..%2F..%2Fadmin', '%2e%2e', 'null', '__proto__', '%E0%A4%A') },
    { weight: 2, arbitrary: fc.constantFrom('0', '-1', '1', '2', '1.5', '-0', '0x10', '1e309', 'NaN', '2147483648', '3000000000', '9007199254740993', '99999999999999999999') },
    { weight: 1, arbitrary: fc.integer({ min: 4000, max: 9000 }).map((n) => 'a'.repeat(n)) },
    { weight: 1, arbitrary: fc.constant(fx.wallet) },
  );

function queryString(route: RouteSpec): fc.Arbitrary<string> {
  const key = route.query.length ? fc.oneof(fc.constantFrom(...route.query), fc.string({ maxLength: 8 })) : fc.string({ maxLength: 8 });
  const value = fc.oneof(
    fc.constantFrom('1', '0', '-1', '100', '101', '99999999999999999999', '1.5', 'true', '', '7d', 'delivered', '2026-01-01', 'email'),
    oddString.map((s) => s.slice(0, 200)),
  );
  return fc
    .array(fc.tuple(key, value, fc.boolean()), { maxLength: 4 })
    .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v, raw]) => `${encodeSegment(k)}=${raw ? v.replace(/[\s#?&]/g, '') : encodeSegment(v)}`).join('&') : ''));
}

function authorization(route: RouteSpec, fx: Fixtures): fc.Arbitrary<string | undefined> {
  const admin = route.path.startsWith('/v1/admin');
  return fc.oneof(
    { weight: admin ? 1 : 6, arbitrary: fc.constant(`Bearer ${fx.apiKey}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${fx.sandboxKey}`) },
    { weight: admin ? 6 : 1, arbitrary: fc.constant(`Bearer ${fx.adminToken}`) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        'Bearer',
        'Bearer ',
        'Basic dXNlcjpwYXNz',
        `bearer ${fx.apiKey}`,
        `Bearer ${fx.apiKey}x`,
        `Bearer ${fx.apiKey.slice(0, -1)}`,
        `Bearer ${'a'.repeat(5000)}`,
        'Bearer \xff\xfe\xfd',
        `Bearer ${fx.apiKey}, Bearer ${fx.sandboxKey}`,
        'hrld_live_',
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => `Bearer ${s.replace(/[\r\n]/g, '')}`) },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/vnd.api+json',
      '',
      '\xff/\xfe',
    ),
  },
);

const extraHeaders = fc.array(
  fc.oneof(
    fc.constantFrom<[string, string]>(
      ['X-Request-Id', '../../../../etc'],
      ['X-Request-Id', 'x'.repeat(300)],
      ['Content-Encoding', 'gzip'],
      ['Expect', '100-continue'],
      ['X-Forwarded-For', 'not-an-ip, ::1'],
      ['Accept', 'text/html'],
      ['Bad Header', 'space in the name'],
      ['X-Control', 'value with \x01 control'],
      ['X-Huge', 'h'.repeat(20_000)],
      ['Transfer-Encoding', 'gzip'],
    ),
    fc.tuple(fc.constant('X-Fuzz'), fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ''))),
  ),
  { maxLength: 2 },
);

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND'];

export type BadRequest = RawRequest & { route: string };

export function describeRequest(request: BadRequest): string {
  const cut = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}…(${text.length} chars)` : text);
  const headers = request.headers.map(([name, value]) => `${name}: ${cut(value, 80)}`).join(' | ');
  const body = request.body ? `${request.body.length} bytes ${JSON.stringify(cut(request.body.toString('latin1'), 160))}` : 'no body';
  return `${request.method} ${cut(request.target, 160)} [${request.route}] {${headers}} ${body} framing=${request.framing}`;
}

/** One generated request: a route of the table, then everything about it possibly wrong. */
export function badRequest(routes: RouteSpec[], fx: Fixtures): fc.Arbitrary<BadRequest> {
  return fc.constantFrom(...routes).chain((route) =>
    fc
      .record({
        method: fc.oneof({ weight: 9, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        params: fc.array(pathValue(fx), { minLength: 3, maxLength: 3 }),
        query: queryString(route),
        auth: authorization(route, fx),
        contentType,
        body: bodyFor(route, fx),
        framing: fc.constantFrom<NonNullable<RawRequest['framing']>>('length', 'length', 'length', 'length', 'length', 'length', 'short', 'long', 'chunked', 'none'),
        extra: extraHeaders,
      })
      .map(({ method, params, query, auth, contentType: type, body, framing, extra }) => {
        let i = 0;
        const target = route.path.replace(/\{[^}]+\}/g, () => params[i++ % params.length]) + query;
        const headers: Array<[string, string]> = [];
        if (auth !== undefined) headers.push(['Authorization', auth]);
        if (type !== undefined) headers.push(['Content-Type', type]);
        headers.push(...extra);
        const request: BadRequest = { route: `${route.method} ${route.path}`, method, target, headers, body, framing: body ? framing : 'length' };
        // fast-check prints counterexamples with this: a 1 MB body is summarised, not dumped.
        Object.defineProperty(request, fc.toStringMethod, { value: () => describeRequest(request) });
        return request;
      }),
  );
}
