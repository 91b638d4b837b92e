/**
 * Handlebars for email templates. Placeholders are `{{variableName}}` (dotted paths and the
 * built-in helpers if, unless, each, with and lookup work too):
 * - `htmlSource`: every value is HTML-escaped (& < > " ' ` =). `{{{…}}}` and `{{& …}}`, which
 *   would insert a value unescaped, are refused, so a variable can never inject markup.
 * - `subjectTemplate`, `textSource`: values are inserted as given (plain text has nothing to escape).
 * Templates run in strict mode: a placeholder whose variable is missing is an error at send time,
 * never an empty gap in a message. Partials, decorators and unknown helpers are refused at
 * create/update, because nothing could resolve them when the template is rendered.
 */
import Handlebars from 'handlebars';
import { cleanSubject, hasVisibleText } from '../rendering/clean-text.js';
import { MissingPathError, notAnObject, prepareForRendering, registerPrint } from './prepare-for-rendering.js';

export { SHOWN_AS } from './prepare-for-rendering.js';

export type TemplateField = 'subjectTemplate' | 'htmlSource' | 'textSource';
export const TEMPLATE_FIELDS: readonly TemplateField[] = ['subjectTemplate', 'htmlSource', 'textSource'];

/** One version's sources, as stored. */
export interface TemplateSources {
  subjectTemplate: string;
  htmlSource: string;
  textSource: string;
}

/** A variable a placeholder needs and the variables do not have. */
export class MissingVariableError extends Error {
  constructor(
    readonly field: TemplateField,
    readonly variable: string,
    readonly line: number,
  ) {
    super(`"${variable}" is missing (used in ${field}, line ${line})`);
  }
}

/** Any other failure while rendering (e.g. `{{#each}}` over something that is not a list). */
export class TemplateRenderError extends Error {
  constructor(
    readonly field: TemplateField,
    detail: string,
  ) {
    super(`${field} could not be rendered: ${detail}`);
  }
}

const hb = Handlebars.create();
registerPrint(hb);
/** The helpers a template may call, with the number of arguments each takes. */
const BUILT_IN_HELPERS = new Map([
  ['if', 1],
  ['unless', 1],
  ['each', 1],
  ['with', 1],
  ['lookup', 2],
]);

type AstNode = { type: string; loc?: hbs.AST.SourceLocation; [key: string]: unknown };

/**
 * Every node of a tree, parents before children and in source order, with the number of blocks
 * and sub-expressions it stands in (itself included); without recursion, so a deeply nested
 * template cannot overflow the stack. A node's children are read after it was handed out, so the
 * caller may rewrite them (prepareForRendering).
 */
function* walkNested(root: unknown): Generator<[AstNode, number]> {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [node, around] = stack.pop()!;
    if (!node || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], around]);
      continue;
    }
    const type = (node as AstNode).type;
    const nesting = type === 'BlockStatement' || type === 'SubExpression' ? around + 1 : around;
    if (typeof type === 'string') yield [node as AstNode, nesting];
    const children = Object.entries(node).filter(([key, value]) => key !== 'loc' && value && typeof value === 'object');
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i][1], nesting]);
  }
}

function* walk(root: unknown): Generator<AstNode> {
  for (const [node] of walkNested(root)) yield node;
}

/** How deeply blocks and sub-expressions may nest, and how many segments a path may have. */
const MAX_NESTING = 50;
const MAX_SEGMENTS = 50;

const lineOf = (node: AstNode) => node.loc?.start.line ?? 1;
const pathName = (path: unknown) => ((path as { original?: unknown })?.original ?? '') as string;

/** A source's lines, where Handlebars counts them (it ends a line at \r\n, \r or \n). */
const linesOf = (source: string) => source.split(/\r\n?|\n/);

/** The source from where the node starts to the end of that line. */
function sourceAt(node: AstNode, lines: string[]): string {
  const loc = node.loc as { start: { line: number; column: number } } | undefined;
  return loc ? (lines[loc.start.line - 1] ?? '').slice(loc.start.column) : '';
}

/** How an unescaped mustache was written, `{{& name}}` or `{{{name}}}` (the tree keeps no difference), without its spaces and `~`. */
function unescapedForm(node: AstNode, lines: string[]): string {
  const name = pathName(node.path);
  return /^\{\{~?\s*&/.test(sourceAt(node, lines)) ? `{{&${name}}}` : `{{{${name}}}}`;
}

/** Why this node cannot be used in `field`, or undefined. */
function refusal(field: TemplateField, node: AstNode, lines: string[]): string | undefined {
  switch (node.type) {
    case 'PartialStatement':
    case 'PartialBlockStatement':
      return 'partials ({{> name}}) are not supported';
    case 'Decorator':
    case 'DecoratorBlock':
      return 'decorators ({{* name}}) are not supported';
    case 'BlockStatement':
      // The tree keeps a raw block as a block of the same name: its text tells them apart.
      if (sourceAt(node, lines).startsWith('{{{{')) return `raw blocks ({{{{${pathName(node.path)}}}}}…{{{{/${pathName(node.path)}}}}}) are not supported`;
      break;
    case 'MustacheStatement':
      if (field === 'htmlSource' && node.escaped === false) {
        return `${unescapedForm(node, lines)} would insert a value without HTML escaping; write {{${pathName(node.path)}}}`;
      }
      break;
  }
  const isCall =
    node.type === 'SubExpression' ||
    ((node.type === 'MustacheStatement' || node.type === 'BlockStatement') &&
      ((node.params as unknown[]).length > 0 || ((node.hash as { pairs?: unknown[] } | undefined)?.pairs?.length ?? 0) > 0));
  const helper = pathName(node.path);
  // A block named after a helper calls it, arguments or not (`{{#log}}…{{/log}}`).
  const reachesHelper = isCall || (node.type === 'BlockStatement' && Object.hasOwn(hb.helpers, helper));
  if (reachesHelper && !BUILT_IN_HELPERS.has(helper)) return `unknown helper "${helper}" (available: ${[...BUILT_IN_HELPERS.keys()].join(', ')})`;
  const arity = BUILT_IN_HELPERS.get(helper);
  if (arity !== undefined && (node.params as unknown[] | undefined)?.length !== arity) {
    return `${helper} takes ${arity === 1 ? 'one argument' : `${arity} arguments`}`;
  }
  return undefined;
}

/**
 * `Parse error on line 3:\n<excerpt>\n---^\nExpecting …` → line 3 and a one-line reason quoting
 * that line of the source (the parser's own excerpt runs lines together).
 */
function describeParseError(error: Error, source: string): { line: number; reason: string } {
  const lines = error.message.split('\n');
  const line = Number(/on line (\d+)/.exec(lines[0])?.[1] ?? (error as { lineNumber?: number }).lineNumber ?? 1);
  const last = lines[lines.length - 1];
  if (lines.length === 1) return { line, reason: last.replace(/ - \d+:\d+$/, '') };
  const text = (source.split('\n')[line - 1] ?? '').trim();
  return { line, reason: `${last.replace(/^Expecting /, 'expecting ')} in "${text.length > 80 ? `${text.slice(0, 77)}...` : text}"` };
}

/**
 * The problem with one source, as "<field> line N: <reason>", or null when it compiles. Run at
 * create and update so a broken template is refused before anything is stored.
 */
export function findTemplateProblem(field: TemplateField, source: string): string | null {
  if (!hasVisibleText(source)) return `${field} is blank: it must hold something to show, not only spaces, control or zero-width characters`;
  const tooDeep = `${field} nests blocks or sub-expressions more than ${MAX_NESTING} deep`;
  let ast: hbs.AST.Program;
  try {
    ast = hb.parse(source);
  } catch (error) {
    if (error instanceof RangeError) return tooDeep;
    const { line, reason } = describeParseError(error as Error, source);
    return `${field} has a syntax error on line ${line}: ${reason}`;
  }
  const lines = linesOf(source);
  for (const [node, nesting] of walkNested(ast)) {
    if (nesting > MAX_NESTING) return tooDeep;
    if (node.type === 'PathExpression' && (node.parts as string[]).length > MAX_SEGMENTS) return `${field} line ${lineOf(node)}: a path of more than ${MAX_SEGMENTS} segments`;
    const problem = refusal(field, node, lines);
    if (problem) return `${field} line ${lineOf(node)}: ${problem}`;
  }
  return null;
}

/**
 * The variable paths the sources name (`name`, `user.name`), helper names and `@data` aside, each
 * once: what a preview fills in one pass instead of discovering them one render at a time. A path
 * named as a block's condition or context (`{{#if flag}}`, `{{#each items}}`) is left out, even
 * where the block also prints it or a field of it (`{{#if promo}}{{promo}}{{/if}}`,
 * `{{#if user}}{{user.name}}{{/if}}`): a send renders a missing one
 * as false (the `{{else}}` part) and never reaches what the block holds, and so must a preview. A
 * preview finds such a path by rendering when it is printed outside its blocks too.
 */
export function placeholderPaths(sources: TemplateSources): string[] {
  return previewPaths(sources).placeholders;
}

/**
 * In one pass over the sources: the placeholders a preview fills (placeholderPaths) and the
 * variables of mustache-style sections, which a send refuses when missing (sections keep
 * Handlebars' strict rule), so a preview must never make one up: a placeholder would render the
 * section as given.
 */
export function previewPaths(sources: TemplateSources): { placeholders: string[]; sections: Set<string> } {
  const paths = new Set<string>();
  const conditions = new Set<string>();
  const sections = new Set<string>();
  for (const source of [sources.subjectTemplate, sources.htmlSource, sources.textSource]) {
    const ast = hb.parse(source);
    const blockParams = new Set<unknown>();
    // A printed `{{lookup user "first"}}` names `user.first`: the preview fills that, not `user`
    // as text. Inside `(lookup user "vip")` (a condition, say), `user` is read as a condition is.
    const lookedUp = new Map<unknown, string>();
    for (const node of walk(ast)) {
      if (node.type === 'BlockStatement') for (const param of node.params as unknown[]) blockParams.add(param);
      // A section's variable is its condition and context, as a block helper's parameter is.
      const section = sectionPath(node);
      if (section !== undefined) {
        blockParams.add(node.path);
        sections.add(section);
      }
      const [object, key] = (node.params as AstNode[] | undefined) ?? [];
      if (pathName(node.path) !== 'lookup' || object?.type !== 'PathExpression') continue;
      if (node.type === 'SubExpression') blockParams.add(object);
      else if (node.type === 'MustacheStatement' && key?.type === 'StringLiteral') lookedUp.set(object, String(key.value));
      // A key that is a variable: the object is found by rendering, once the key has its value.
      else if (node.type === 'MustacheStatement') blockParams.add(object);
    }
    for (const node of walk(ast)) {
      if (node.type !== 'PathExpression' || node.data || (node.depth as number) > 0) continue;
      const key = lookedUp.get(node);
      const path = [...(node.parts as string[]), ...(key === undefined ? [] : [key])].join('.');
      if (!path || BUILT_IN_HELPERS.has(path)) continue;
      (blockParams.has(node) ? conditions : paths).add(path);
    }
  }
  // A field of a condition's value (`{{#if user}}{{user.name}}`) would make the condition true.
  const fieldsOfConditions = [...conditions].map((condition) => `${condition}.`);
  const placeholders = [...paths].filter((path) => !conditions.has(path) && !fieldsOfConditions.some((prefix) => path.startsWith(prefix)));
  return { placeholders, sections };
}

/**
 * The variable of a mustache-style section (`{{#promo}}…{{/promo}}`, `{{^vip}}…{{/vip}}`): a block
 * named after a variable rather than a helper. Undefined for any other node.
 */
function sectionPath(node: AstNode): string | undefined {
  if (node.type !== 'BlockStatement') return undefined;
  const path = node.path as AstNode;
  if (path.type !== 'PathExpression' || path.data || (path.depth as number) > 0) return undefined;
  const name = (path.parts as string[]).join('.');
  return name && !BUILT_IN_HELPERS.has(name) ? name : undefined;
}

interface CompiledSource {
  field: TemplateField;
  render: (variables: Record<string, unknown>) => string;
  /** Placeholder paths by "line:column", to name the variable a strict-mode error points at. */
  paths: Map<string, string>;
}

function compileSource(field: TemplateField, source: string): CompiledSource {
  const ast = hb.parse(source);
  const paths = new Map<string, string>();
  for (const node of walk(ast)) {
    if (node.type === 'PathExpression' && node.loc) paths.set(`${node.loc.start.line}:${node.loc.start.column}`, pathName(node));
  }
  prepareForRendering(walk(ast));
  const template = hb.compile(ast, { strict: true, noEscape: field !== 'htmlSource' });
  return { field, render: (variables) => template(variables), paths };
}

function renderSource(compiled: CompiledSource, variables: Record<string, unknown>): string {
  try {
    return compiled.render(variables);
  } catch (error) {
    if (error instanceof MissingPathError) throw missingPath(compiled.field, error.path, error.line);
    const { message, lineNumber, column } = error as { message: string; lineNumber?: number; column?: number };
    const missing = /^"([^"]+)" not defined in/.exec(message);
    if (missing) throw missingPath(compiled.field, compiled.paths.get(`${lineNumber}:${column}`) ?? missing[1], lineNumber ?? 1);
    throw new TemplateRenderError(compiled.field, readableRenderError(message));
  }
}

/**
 * A path the render found no value for. A data name (`@foo`, `@index` outside `{{#each}}`) is not
 * a variable: no templateVariables could fill it, so it is not reported as a missing one.
 */
function missingPath(field: TemplateField, path: string, line: number): Error {
  if (path.startsWith('@') && !path.startsWith('@root.')) {
    return new TemplateRenderError(field, `line ${line}: "${path}" is not an @ name Handlebars sets there (@root anywhere; @index, @key, @first and @last inside {{#each}})`);
  }
  // `@root.name` is the variable `name`: that is what templateVariables must hold.
  return new MissingVariableError(field, path.replace(/^this\.|^@root\./, ''), line);
}

/** The engine's own words where they are JavaScript's (a field looked up on a string or number). */
function readableRenderError(message: string): string {
  // A `../` climbing above the variables, or a data variable (`@name`) that does not exist.
  const beyond = /^Cannot read properties of (?:undefined|null) \(reading '([^']*)'\)$/.exec(message);
  if (beyond) return `"${beyond[1]}" is read from nothing: a ../ path climbs above the variables, or an @ name is not one Handlebars sets there`;
  const lookup = /^Cannot use 'in' operator to search for '([^']*)' in (.*)$/s.exec(message);
  return lookup ? notAnObject(lookup[1], lookup[2]) : message;
}

/** The longest subject an email header carries (as for a send's own `subject`). */
const MAX_SUBJECT = 998;

/**
 * What the variables made of a template must be sendable, as a send's own subject and body must
 * be: a subject that shows something and fits an email header, and a text that shows something
 * (Telegram and SMS carry it, and refuse an empty message).
 */
function checkRendered(rendered: { subject: string; text: string }): void {
  const blank = 'only spaces, control or zero-width characters';
  if (!hasVisibleText(rendered.subject)) throw new TemplateRenderError('subjectTemplate', `the subject it renders with these variables is blank (${blank})`);
  const length = [...cleanSubject(rendered.subject)].length;
  if (length > MAX_SUBJECT) throw new TemplateRenderError('subjectTemplate', `the subject it renders with these variables is ${length} characters; at most ${MAX_SUBJECT} fit an email header`);
  if (!hasVisibleText(rendered.text)) throw new TemplateRenderError('textSource', `the text it renders with these variables is blank (${blank}); Telegram and SMS carry it`);
}

export interface CompiledTemplate {
  /** Throws MissingVariableError or TemplateRenderError. */
  render(variables: Record<string, unknown>): { subject: string; html: string; text: string };
}

// Versions never change once stored, so a compiled version stays valid for good; the cap only
// bounds memory when many templates are in use.
const CACHE_LIMIT = 500;
const cache = new Map<string, CompiledTemplate>();

/**
 * Compiles a version's three sources (which passed findTemplateProblem when they were stored).
 * `cacheKey` (template id and version) keeps the compiled form for the next message.
 */
export function compileTemplate(sources: TemplateSources, cacheKey?: string): CompiledTemplate {
  const cached = cacheKey ? cache.get(cacheKey) : undefined;
  if (cached) return cached;
  const subject = compileSource('subjectTemplate', sources.subjectTemplate);
  const html = compileSource('htmlSource', sources.htmlSource);
  const text = compileSource('textSource', sources.textSource);
  const compiled: CompiledTemplate = {
    render: (variables) => {
      const rendered = { subject: renderSource(subject, variables), html: renderSource(html, variables), text: renderSource(text, variables) };
      checkRendered(rendered);
      return rendered;
    },
  };
  if (cacheKey) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(cacheKey, compiled);
  }
  return compiled;
}
