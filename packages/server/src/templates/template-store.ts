import type { Queryable } from '../db/connection.js';
import type { ServiceFooter } from '../rendering/render-notification.js';
import type { TemplateVersion } from './render-templated-notification.js';

export interface TemplateRow {
  id: string;
  protocol_id: string;
  name: string;
  category: string;
  current_version: number;
  created_at: Date;
  updated_at: Date;
}

export interface VersionSources {
  subjectTemplate: string;
  htmlSource: string;
  textSource: string;
  serviceFooter: ServiceFooter;
}

interface VersionRow {
  template_id: string;
  version: number;
  subject_template: string;
  html_source: string;
  text_source: string;
  service_footer: ServiceFooter;
  created_at: Date;
}

const VERSION_COLUMNS = 'template_id, version, subject_template, html_source, text_source, service_footer, created_at';

function toVersion(row: VersionRow): TemplateVersion & { createdAt: Date } {
  return {
    templateId: row.template_id,
    version: row.version,
    subjectTemplate: row.subject_template,
    htmlSource: row.html_source,
    textSource: row.text_source,
    serviceFooter: row.service_footer,
    createdAt: row.created_at,
  };
}

/** A new template and its version 1. */
export async function insertTemplate(
  db: Queryable,
  t: { id: string; protocolId: string; name: string; category: string; sources: VersionSources; now: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO email_templates (id, protocol_id, name, category, current_version, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 1, $5, $5)`,
    [t.id, t.protocolId, t.name, t.category, t.now],
  );
  await insertVersion(db, t.id, 1, t.sources, t.now);
}

export async function insertVersion(db: Queryable, templateId: string, version: number, s: VersionSources, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO email_template_versions (template_id, version, subject_template, html_source, text_source, service_footer, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [templateId, version, s.subjectTemplate, s.htmlSource, s.textSource, s.serviceFooter, now],
  );
}

/** The protocol's live templates, newest first. */
export async function listTemplates(db: Queryable, protocolId: string): Promise<TemplateRow[]> {
  return db.query<TemplateRow>(
    `SELECT id, protocol_id, name, category, current_version, created_at, updated_at FROM email_templates
     WHERE protocol_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC`,
    [protocolId],
  );
}

export async function findTemplate(db: Queryable, protocolId: string, id: string): Promise<TemplateRow | undefined> {
  const [row] = await db.query<TemplateRow>(
    `SELECT id, protocol_id, name, category, current_version, created_at, updated_at FROM email_templates
     WHERE id = $1 AND protocol_id = $2 AND deleted_at IS NULL`,
    [id, protocolId],
  );
  return row;
}

/**
 * Takes the next version number of a live template (the row lock serialises concurrent updates)
 * and applies the new name and category; undefined when the template is not there.
 */
export async function advanceVersion(
  db: Queryable,
  protocolId: string,
  id: string,
  changes: { name?: string; category?: string },
  now: Date,
): Promise<TemplateRow | undefined> {
  const [row] = await db.query<TemplateRow>(
    `UPDATE email_templates SET current_version = current_version + 1, name = COALESCE($3, name), category = COALESCE($4, category), updated_at = $5
     WHERE id = $1 AND protocol_id = $2 AND deleted_at IS NULL
     RETURNING id, protocol_id, name, category, current_version, created_at, updated_at`,
    [id, protocolId, changes.name ?? null, changes.category ?? null, now],
  );
  return row;
}

export async function findVersion(db: Queryable, templateId: string, version: number) {
  const [row] = await db.query<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM email_template_versions WHERE template_id = $1 AND version = $2`, [
    templateId,
    version,
  ]);
  return row && toVersion(row);
}

export async function listVersions(db: Queryable, templateId: string): Promise<{ version: number; created_at: Date }[]> {
  return db.query('SELECT version, created_at FROM email_template_versions WHERE template_id = $1 ORDER BY version', [templateId]);
}

/** Soft delete: versions stay, so notifications already queued with the template still render. */
export async function markTemplateDeleted(db: Queryable, protocolId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db.query('UPDATE email_templates SET deleted_at = $3 WHERE id = $1 AND protocol_id = $2 AND deleted_at IS NULL RETURNING id', [
    id,
    protocolId,
    now,
  ]);
  return rows.length === 1;
}

/** The current version of each live template of the protocol among `ids`, sources included. */
export async function currentVersionsWithSources(db: Queryable, protocolId: string, ids: string[]): Promise<Map<string, TemplateVersion>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS.split(', ').map((c) => `v.${c}`).join(', ')}
     FROM email_templates t JOIN email_template_versions v ON v.template_id = t.id AND v.version = t.current_version
     WHERE t.protocol_id = $1 AND t.id = ANY($2::text[]) AND t.deleted_at IS NULL`,
    [protocolId, ids],
  );
  return new Map(rows.map((r) => [r.template_id, toVersion(r)]));
}

/**
 * Exact versions by (template id, version), whatever has happened to the template since: a
 * notification renders with the version it recorded, even after an update or a delete.
 */
export async function loadTemplateVersions(db: Queryable, refs: { templateId: string; version: number }[]): Promise<Map<string, TemplateVersion>> {
  const unique = [...new Map(refs.map((r) => [`${r.templateId}@${r.version}`, r])).values()];
  if (unique.length === 0) return new Map();
  const rows = await db.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS.split(', ').map((c) => `v.${c}`).join(', ')}
     FROM unnest($1::text[], $2::int[]) AS r(template_id, version)
     JOIN email_template_versions v ON v.template_id = r.template_id AND v.version = r.version`,
    [unique.map((r) => r.templateId), unique.map((r) => r.version)],
  );
  return new Map(rows.map((r) => [`${r.template_id}@${r.version}`, toVersion(r)]));
}
