import type { Queryable } from '../db/connection.js';
import { ApiError } from '../http/errors.js';
import { compileTemplate, MissingVariableError, TemplateRenderError } from './compile-template.js';
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
  const ids = [...new Set(items.flatMap((item) => (item.templateId ? [item.templateId] : [])))];
  if (ids.length === 0) return new Map();
  requireTemplateTier(protocol.tier);
  const versions = await currentVersionsWithSources(db, protocol.id, ids);
  const missing = ids.find((id) => !versions.has(id));
  if (missing) throw new ApiError('TEMPLATE_NOT_FOUND', `Template ${missing} does not exist`);
  items.forEach((item, i) => {
    if (item.templateId) checkTemplateVariables(versions.get(item.templateId)!, item.templateVariables, fieldOf(i, 'templateVariables'));
  });
  return versions;
}
