import { requireLiveKey, type KeyHolder } from '../auth/live-key.js';
import { answeredBefore, createOnce, type CreationKey, type Keyed } from '../creation-keys/creation-key.js';
import type { Deps } from '../deps.js';
import type { Queryable } from '../db/connection.js';
import { ApiError } from '../http/errors.js';
import { newId } from '../ids.js';
import type { ServiceFooter } from '../rendering/render-notification.js';
import { findTemplateProblem, TEMPLATE_FIELDS, type TemplateField } from './compile-template.js';
import {
  advanceVersion,
  findTemplate,
  findVersion,
  insertTemplate,
  insertVersion,
  listVersions,
  markTemplateDeleted,
  type VersionSources,
} from './template-store.js';

export interface TemplateRecord {
  id: string;
  name: string;
  category: string;
  /** The current version. */
  version: number;
  subjectTemplate: string;
  htmlSource: string;
  textSource: string;
  serviceFooter: ServiceFooter;
  createdAt: string;
  updatedAt: string;
  versions: { version: number; createdAt: string }[];
}

export interface TemplateChanges {
  name?: string;
  category?: string;
  subjectTemplate?: string;
  htmlSource?: string;
  textSource?: string;
  serviceFooter?: ServiceFooter;
}

type Db = Pick<Deps, 'db' | 'now'>;

export function requireTemplateTier(tier: number): void {
  if (tier < 1) throw new ApiError('TIER_REQUIRED', 'Email templates need the Growth tier (1) or above');
}

/** Refuses sources that do not compile, naming the field and the line. */
function checkSources(changes: Partial<Record<TemplateField, string>>): void {
  for (const field of TEMPLATE_FIELDS) {
    const source = changes[field];
    if (source === undefined) continue;
    const problem = findTemplateProblem(field, source);
    if (problem) throw new ApiError('VALIDATION_ERROR', problem);
  }
}

const notFound = (id: string) => new ApiError('TEMPLATE_NOT_FOUND', `Template ${id} does not exist`);

/**
 * Live sends render a template's current version, so only a live key creates, changes, deletes or
 * restores templates (403 for a sandbox key); an unknown or another protocol's id is a 404 first,
 * as on every route that takes an id.
 */
export async function requireTemplateWriter(deps: Db, sender: KeyHolder, id?: string): Promise<void> {
  if (sender.environment === 'production') return;
  if (id !== undefined && !(await findTemplate(deps.db, sender.protocolId, id))) throw notFound(id);
  requireLiveKey(sender.environment, 'Changing a template', 'production sends use its current version');
}

export function readTemplate(deps: Db, protocolId: string, id: string): Promise<TemplateRecord> {
  return templateRecord(deps.db, protocolId, id);
}

/** The record as `db` sees it: inside a transaction that made a version, that version. */
async function templateRecord(db: Queryable, protocolId: string, id: string): Promise<TemplateRecord> {
  const template = await findTemplate(db, protocolId, id);
  if (!template) throw notFound(id);
  const [current, versions] = await Promise.all([findVersion(db, id, template.current_version), listVersions(db, id)]);
  return {
    id: template.id,
    name: template.name,
    category: template.category,
    version: template.current_version,
    subjectTemplate: current!.subjectTemplate,
    htmlSource: current!.htmlSource,
    textSource: current!.textSource,
    serviceFooter: current!.serviceFooter,
    createdAt: template.created_at.toISOString(),
    updatedAt: template.updated_at.toISOString(),
    versions: versions.map((v) => ({ version: v.version, createdAt: v.created_at.toISOString() })),
  };
}

/**
 * Runs a write that makes something new (a template, a version) once per Idempotency-Key: a
 * repeated key gets the first answer before anything is checked, and the write commits with
 * the key (createOnce).
 */
async function once<T>(deps: Db, key: CreationKey | undefined, write: (tx: Queryable) => Promise<T>): Promise<Keyed<T>> {
  const before = await answeredBefore<T>(deps.db, key);
  if (before !== undefined) return { answer: before, replayed: true };
  return createOnce(deps.db, key, deps.now(), write);
}

export async function createTemplate(
  deps: Db,
  protocolId: string,
  input: { name: string; category: string } & Omit<VersionSources, 'serviceFooter'> & { serviceFooter?: ServiceFooter },
  key?: CreationKey,
): Promise<Keyed<{ templateId: string }>> {
  return once(deps, key, async (tx) => {
    checkSources(input);
    const id = newId.template();
    const sources: VersionSources = {
      subjectTemplate: input.subjectTemplate,
      htmlSource: input.htmlSource,
      textSource: input.textSource,
      serviceFooter: input.serviceFooter ?? 'full',
    };
    await insertTemplate(tx, { id, protocolId, name: input.name, category: input.category, sources, now: deps.now() });
    return { templateId: id };
  });
}

/**
 * PUT: a new version from the given fields, every other field carried over from the current
 * version. `name` and `category` belong to the template, not to a version: they change in place.
 */
export async function updateTemplate(deps: Db, protocolId: string, id: string, changes: TemplateChanges, key?: CreationKey): Promise<Keyed<TemplateRecord>> {
  const now = deps.now();
  // Answered from the transaction: a concurrent update's version is not this call's.
  return once(deps, key, async (tx) => {
    checkSources(changes);
    const template = await advanceVersion(tx, protocolId, id, changes, now);
    if (!template) throw notFound(id);
    const previous = (await findVersion(tx, id, template.current_version - 1))!;
    await insertVersion(
      tx,
      id,
      template.current_version,
      {
        subjectTemplate: changes.subjectTemplate ?? previous.subjectTemplate,
        htmlSource: changes.htmlSource ?? previous.htmlSource,
        textSource: changes.textSource ?? previous.textSource,
        serviceFooter: changes.serviceFooter ?? previous.serviceFooter,
      },
      now,
    );
    return templateRecord(tx, protocolId, id);
  });
}

/**
 * Makes an old version current by copying it as a new version: history only ever grows, and
 * every notification keeps pointing at the exact sources it was rendered from.
 */
export async function restoreTemplateVersion(deps: Db, protocolId: string, id: string, version: number, key?: CreationKey): Promise<Keyed<TemplateRecord>> {
  const now = deps.now();
  return once(deps, key, async (tx) => {
    const template = await advanceVersion(tx, protocolId, id, {}, now);
    if (!template) throw notFound(id);
    const old = await findVersion(tx, id, version);
    if (!old) throw new ApiError('TEMPLATE_NOT_FOUND', `Template ${id} has no version ${version}`);
    await insertVersion(tx, id, template.current_version, old, now);
    return templateRecord(tx, protocolId, id);
  });
}

export async function deleteTemplate(deps: Db, protocolId: string, id: string): Promise<void> {
  if (!(await markTemplateDeleted(deps.db, protocolId, id, deps.now()))) throw notFound(id);
}

/** One stored version's sources (GET …/versions/:version). */
export async function readTemplateVersion(deps: Db, protocolId: string, id: string, version: number) {
  const template = await findTemplate(deps.db, protocolId, id);
  if (!template) throw notFound(id);
  const found = await findVersion(deps.db, id, version);
  if (!found) throw new ApiError('TEMPLATE_NOT_FOUND', `Template ${id} has no version ${version}`);
  return {
    id,
    version: found.version,
    current: found.version === template.current_version,
    subjectTemplate: found.subjectTemplate,
    htmlSource: found.htmlSource,
    textSource: found.textSource,
    serviceFooter: found.serviceFooter,
    createdAt: found.createdAt.toISOString(),
  };
}
