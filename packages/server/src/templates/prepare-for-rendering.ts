/**
 * How a parsed template source is rendered (the stored source is unchanged), on top of
 * Handlebars' strict mode:
 * - a block's condition or context and a helper's argument never fail on a missing or null
 *   parent: `a.b.c` there reads as `(lookup (lookup a "b") "c")`, so a missing one is false;
 * - every printed placeholder, `{{a.b}}` and `{{lookup a "b"}}` alike, goes through PRINT, which
 *   refuses a missing value (MissingPathError, naming the whole path) and a value that is an
 *   object or a list (they would print as "[object Object]" and "1,2").
 */
import type Handlebars from 'handlebars';

type Engine = typeof Handlebars;
type PathNode = hbs.AST.PathExpression;
type Param = hbs.AST.Expression;
type Node = { type: string; [key: string]: unknown };

/** The helper printed placeholders go through. A template cannot call it (compile-template.ts refuses every helper but the built-in ones). */
export const PRINT = 'heraldPrint';

/**
 * The text a value made up by a preview prints as (`{{a}}` for the object standing in for a missing
 * `a` of `{{a.b}}`): a value no variable given as JSON can carry.
 */
export const SHOWN_AS = Symbol('herald.shownAs');

/** A printed placeholder with no value: its whole path, as written, and its line. */
export class MissingPathError extends Error {
  constructor(
    readonly path: string,
    readonly line: number,
  ) {
    super(`"${path}" has no value`);
  }
}

/** `this.id` and `./id` name the context's field, never a block parameter (`as |id|`). */
const SCOPED = /^\.|this\b/;

/** The lookup of the first segment of `path`: in the context at its depth, or in `@data` (`@root`). */
function headOf(path: PathNode): PathNode {
  const [first] = path.parts;
  const original = path.data ? `@${first}` : first === undefined ? 'this' : SCOPED.test(path.original) ? `this.${first}` : first;
  return { type: 'PathExpression', data: path.data, depth: path.depth, parts: first === undefined ? [] : [first], original, loc: path.loc };
}

const literal = (value: string, loc: hbs.AST.SourceLocation): hbs.AST.StringLiteral => ({ type: 'StringLiteral', value, original: value, loc });
const hashOf = (pairs: [string, string][], loc: hbs.AST.SourceLocation): hbs.AST.Hash => ({
  type: 'Hash',
  pairs: pairs.map(([key, value]) => ({ type: 'HashPair', key, value: literal(value, loc), loc })),
  loc,
});

/** A path of several segments: the ones whose parents may be missing. */
const isDeep = (path: PathNode) => path.parts.length > 1;

/**
 * A condition or argument `a.b.c` as `(lookup (lookup a "b") "c")`. Strict mode reads the segments
 * before the last without checking them; the lookup helper reads a missing or null one as
 * undefined, so a condition on it is false.
 */
function safeParam(param: Param): Param {
  if (param.type !== 'PathExpression' || !isDeep(param as PathNode)) return param;
  const path = param as PathNode;
  const lookup: PathNode = { type: 'PathExpression', data: false, depth: 0, parts: ['lookup'], original: 'lookup', loc: path.loc };
  return path.parts.slice(1).reduce<Param>(
    (inner, name) => ({ type: 'SubExpression', path: lookup, params: [inner, literal(name, path.loc)], hash: undefined as never, loc: path.loc }) as hbs.AST.SubExpression,
    headOf(path),
  );
}

/** How an argument was written, to name it in a refusal (`../items` → `items`). */
function nameOf(param: Param): string {
  if (param.type === 'PathExpression') return (param as PathNode).original.replace(/^(?:\.\.\/)+/, '') || 'this';
  if (param.type === 'SubExpression') {
    const [object, key] = (param as hbs.AST.SubExpression).params;
    return `${nameOf(object)}.${nameOf(key)}`;
  }
  return String((param as hbs.AST.StringLiteral).original);
}

/** Rewrites the tree in place, as the module comment says. `nodes` is every node of the tree. */
export function prepareForRendering(nodes: Iterable<Node>): void {
  for (const node of nodes) {
    if (node.type !== 'MustacheStatement' && node.type !== 'BlockStatement' && node.type !== 'SubExpression') continue;
    const call = node as unknown as hbs.AST.MustacheStatement;
    call.params = call.params.map(safeParam);
    for (const pair of call.hash?.pairs ?? []) pair.value = safeParam(pair.value);
    if (node.type !== 'MustacheStatement' || call.path.type !== 'PathExpression') continue;
    const path = call.path as PathNode;
    const printed = { ...path, parts: [PRINT], original: PRINT, depth: 0, data: false };
    if (call.params.length === 0 && !call.hash) {
      call.params = [headOf(path), ...path.parts.slice(1).map((name) => literal(name, call.loc))];
      call.hash = hashOf([['path', path.data ? path.original : nameOf(path)]], call.loc);
      call.path = printed;
    } else if (!path.data && path.original === 'lookup' && call.params.length === 2) {
      // The key may be a variable: the path is named once its value is known.
      call.hash = hashOf([['object', nameOf(call.params[0])], ['key', nameOf(call.params[1])]], call.loc);
      call.path = printed;
    }
  }
}

/** The refusal of a field read from a text, number or boolean. */
export function notAnObject(key: string, value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
  return `"${key}" cannot be read from the value ${JSON.stringify(shown)}, which is not an object`;
}

interface PrintOptions {
  hash: { path?: string; object?: string; key?: string };
  loc?: hbs.AST.SourceLocation;
}

/** Registers PRINT on a Handlebars environment. */
export function registerPrint(hb: Engine): void {
  hb.registerHelper(PRINT, (...args: unknown[]) => {
    const options = args.pop() as PrintOptions;
    const [head, ...keys] = args;
    const line = options.loc?.start.line ?? 1;
    // A lookup whose key is a variable without a value: that variable is what is missing.
    if (options.hash.key !== undefined && keys[0] === undefined) throw new MissingPathError(options.hash.key, line);
    const path = options.hash.path ?? `${options.hash.object}.${keys.map(String).join('.')}`;
    const missing = () => new MissingPathError(path, line);
    let value = head;
    for (const key of keys) {
      if (value === undefined || value === null) throw missing();
      if (typeof value !== 'object') throw new hb.Exception(notAnObject(String(key), String(value)));
      if (!Object.prototype.hasOwnProperty.call(value, key as PropertyKey)) throw missing();
      value = (value as Record<string, unknown>)[key as string];
    }
    if (value === undefined) throw missing();
    if (value !== null && typeof value === 'object') {
      if (SHOWN_AS in value) return (value as { [SHOWN_AS]: string })[SHOWN_AS];
      throw new hb.Exception(`"${path}" is ${Array.isArray(value) ? 'a list' : 'an object'}; a placeholder prints text, a number or true/false`);
    }
    return value;
  });
}
