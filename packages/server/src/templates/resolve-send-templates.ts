import type { Queryable } from '../db/connection.js';
import { ApiError } from '../http/errors.js';
import { compileTemplate, MissingVariableError, previewPaths, SHOWN_AS, TemplateRenderError } from './compile-template.js';
import { requireTemplateTier } from './manage-templates.js';
import type { TemplateVersion } from './render-templated-notification.js';
import { currentVersionsWithSources } from './template-store.js';

export interface TemplatedSend {
  templateId?: string;
  templateVariables?: Record<string, unknown>;
}

/** Renders once so a missing variable is refused now, not discovered by the delivery worker. */
export function checkTemplateVariables(template: TemplateVersion, variables: Record<string, unknown> | undefined, field: string): void {
  try {
    compileTemplate(template, `${template.templateId}@${template.version}`).render(variables ?? {});
  } catch (error) {
    if (error instanceof MissingVariableError) {
      throw new ApiError(
        'VALIDATION_ERROR',
        `${field} has no value for "${error.variable}", used by template ${template.templateId} (${error.field}, line ${error.line})`,
      );
    }
    if (error instanceof TemplateRenderError) throw new ApiError('VALIDATION_ERROR', `${field} does not fit template ${template.templateId}: ${error.message}`);
    throw error;
  }
}

/**
 * For a send naming templates: checks the tier, that every template is a live one of this
 * protocol, and that each item's templateVariables fill every placeholder of the template's
 * current version. Returns that version per template id: the one the notification records.
 * `fieldOf(i, 'templateVariables')` names the item's field in errors.
 */
export async function resolveSendTemplates(
  db: Queryable,
  protocol: { id: string; tier: number },
  items: TemplatedSend[],
  fieldOf: (index: number, field: string) => string,
): Promise<Map<string, TemplateVersion>> {
  const versions = await findTemplates(db, protocol, items, fieldOf);
  items.forEach((item, i) => {
    if (item.templateId) checkTemplateVariables(versions.get(item.templateId)!, item.templateVariables, fieldOf(i, 'templateVariables'));
  });
  return versions;
}

/**
 * The current version of every template the items name, after the tier check; 404 for one that
 * is not a live template of this protocol, naming the first item that uses it when the items are
 * a bulk request's (`notifications[2].templateId`).
 */
export async function findTemplates(
  db: Queryable,
  protocol: { id: string; tier: number },
  items: TemplatedSend[],
  fieldOf: (index: number, field: string) => string = (_i, field) => field,
): Promise<Map<string, TemplateVersion>> {
  const ids = [...new Set(items.flatMap((item) => (item.templateId ? [item.templateId] : [])))];
  if (ids.length === 0) return new Map();
  requireTemplateTier(protocol.tier);
  const versions = await currentVersionsWithSources(db, protocol.id, ids);
  const missing = ids.find((id) => !versions.has(id));
  if (missing) {
    const field = fieldOf(items.findIndex((item) => item.templateId === missing), 'templateId');
    throw new ApiError('TEMPLATE_NOT_FOUND', `Template ${missing} does not exist${field === 'templateId' ? '' : ` (${field})`}`);
  }
  return versions;
}

/**
 * The variables a preview renders with: those given, and each placeholder left without a value
 * shown as written (`{{name}}`), so a template can be previewed before its values are known. A
 * placeholder that cannot be filled that way (inside `{{#each}}` over given values, or under a
 * given value that is not an object) is refused as a send would refuse it.
 */
export function previewVariables(template: TemplateVersion, given: Record<string, unknown> = {}): Record<string, unknown> {
  const variables = structuredClone(given);
  // Every placeholder the sources name, filled at once: a template of thousands of placeholders
  // costs one render, not one per placeholder. What is left (a placeholder inside {{#each}} over
  // given items, say) is found by rendering, a few times at most.
  const { placeholders, sections } = previewPaths(template);
  for (const path of placeholders) fill(variables, path);
  const compiled = compileTemplate(template, `${template.templateId}@${template.version}`);
  const filled = new Set<string>();
  for (;;) {
    try {
      compiled.render(variables);
      return variables;
    } catch (error) {
      const refused = !(error instanceof MissingVariableError) || sections.has(error.variable);
      if (refused || filled.has(error.variable) || filled.size >= MAX_RENDERS || !fill(variables, error.variable)) {
        checkTemplateVariables(template, variables, 'templateVariables');
        throw error;
      }
      filled.add(error.variable);
    }
  }
}

/** Renders a preview may take to find placeholders previewPaths could not fill. */
const MAX_RENDERS = 20;

/**
 * Sets `a.b.c` to "{{a.b.c}}" unless it has a value, creating the objects on the way; false when
 * a value in the way is not an object. Each is an own field (a name such as `constructor` or
 * `__proto__` too, which a send reads when given), never a prototype.
 */
function fill(variables: Record<string, unknown>, path: string): boolean {
  const names = path.split('.');
  let at = variables;
  for (const [i, name] of names.slice(0, -1).entries()) {
    const next = Object.hasOwn(at, name) ? at[name] : setOwn(at, name, placeholderObject(names.slice(0, i + 1).join('.')));
    if (typeof next !== 'object' || next === null || Array.isArray(next)) return false;
    at = next as Record<string, unknown>;
  }
  const last = names[names.length - 1];
  if (!Object.hasOwn(at, last)) setOwn(at, last, `{{${path}}}`);
  return true;
}

function setOwn<T>(object: Record<string, unknown>, name: string, value: T): T {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
  return value;
}

/**
 * An object the preview makes up for a missing `a` of `{{a.b}}`: a template that also names `{{a}}`
 * whole shows it as written (SHOWN_AS), where an object given as a value is refused. The symbol is
 * no field: `{{#each a}}` sees only the fields.
 */
function placeholderObject(path: string): Record<string, unknown> {
  return Object.defineProperty({}, SHOWN_AS, { value: `{{${path}}}`, enumerable: false });
}
