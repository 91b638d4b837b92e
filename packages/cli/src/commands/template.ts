import { readFileSync } from 'node:fs';
import type { Category, CreateTemplateParams, ServiceFooter, Template, UpdateTemplateParams } from '@herald/sdk';
import { Option, type Command } from 'commander';
import { cancelled, usageError } from '../exit-codes.js';
import { CREATE_KEY_HELP } from '../idempotency-key.js';
import { withCreationKey } from '../keyed-request.js';
import { CATEGORIES } from '../notification-input.js';
import { integerIn } from '../parse-options.js';
import type { Output } from '../output.js';
import { canPrompt, confirm } from '../prompt.js';
import type { ContextOf } from './admin.js';

interface TemplateFlags {
  name?: string;
  category?: Category;
  subject?: string;
  html?: string;
  htmlFile?: string;
  text?: string;
  textFile?: string;
  serviceFooter?: ServiceFooter;
  idempotencyKey?: string;
}

function addTemplateOptions(command: Command): Command {
  return command
    .option('--name <name>', 'template name')
    .addOption(new Option('--category <category>', 'category of the messages sent with it').choices(CATEGORIES))
    .option('--subject <template>', 'subject, Handlebars: Health factor {{health}}')
    .option('--html <source>', 'HTML body, Handlebars ({{value}} is HTML-escaped)')
    .option('--html-file <path>', 'read the HTML body from a file')
    .option('--text <source>', 'plain-text body, Handlebars (email text part, Telegram and SMS)')
    .option('--text-file <path>', 'read the plain-text body from a file')
    .addOption(new Option('--service-footer <footer>', 'full (default), minimal or none').choices(['full', 'minimal', 'none']))
    .option('--idempotency-key <key>', CREATE_KEY_HELP);
}

function source(inline: string | undefined, file: string | undefined, flag: string): string | undefined {
  if (inline !== undefined && file !== undefined) throw usageError(`Give --${flag} or --${flag}-file, not both`);
  if (file === undefined) return inline;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw usageError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The template fields the flags give, in the API's names. */
function templateFields(flags: TemplateFlags): UpdateTemplateParams {
  const fields: Record<string, string | undefined> = {
    name: flags.name,
    category: flags.category,
    subjectTemplate: flags.subject,
    htmlSource: source(flags.html, flags.htmlFile, 'html'),
    textSource: source(flags.text, flags.textFile, 'text'),
    serviceFooter: flags.serviceFooter,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as UpdateTemplateParams;
}

function showTemplate(out: Output, template: Template): void {
  out.fields([
    ['id', template.id],
    ['name', template.name],
    ['category', template.category],
    ['version', `${template.version} of ${template.versions.length}`],
    ['service footer', template.serviceFooter],
    ['updated', template.updatedAt],
    ['subject', template.subjectTemplate],
  ]);
  out.line();
  out.line(out.style.bold('HTML'));
  out.line(template.htmlSource);
  out.line();
  out.line(out.style.bold('Text'));
  out.line(template.textSource);
}

/** `herald template list | get | create | update | delete | restore` (Growth tier and above). */
export function registerTemplate(program: Command, contextOf: ContextOf): void {
  const template = program.command('template').description('versioned email templates (Growth tier and above)');

  template
    .command('list')
    .description("your protocol's templates, newest first")
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command);
      const list = await context.herald().templates.list();
      context.out.result(list, () => context.out.table(['ID', 'NAME', 'CATEGORY', 'CREATED'], list.data.map((t) => [t.id, t.name, t.category, t.createdAt])));
    });

  template
    .command('get')
    .description('a template: its current version, or the stored version given')
    .argument('<id>', 'template id (tmpl_…)')
    .argument('[version]', 'a stored version number', integerIn(1, 1_000_000))
    .action(async (id: string, wanted: number | undefined, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const { out } = context;
      if (wanted === undefined) {
        const record = await context.herald().templates.get(id);
        return out.result(record, () => showTemplate(out, record));
      }
      const version = await context.herald().templates.getVersion(id, wanted);
      out.result(version, () => {
        out.fields([
          ['id', version.id],
          ['version', `${version.version}${version.current ? ' (current)' : ''}`],
          ['subject', version.subjectTemplate],
        ]);
        out.line(version.htmlSource);
      });
    });

  addTemplateOptions(template.command('create').description('create a template (version 1)')).action(async (flags: TemplateFlags, command: Command) => {
    const fields = templateFields(flags);
    const missing = (['name', 'category', 'subjectTemplate', 'htmlSource', 'textSource'] as const).filter((field) => fields[field] === undefined);
    const flagOf = { name: '--name', category: '--category', subjectTemplate: '--subject', htmlSource: '--html or --html-file', textSource: '--text or --text-file' };
    if (missing.length > 0) throw usageError(`Missing ${missing.map((field) => flagOf[field]).join(', ')}`);
    const context = contextOf(command);
    const created = await withCreationKey(flags.idempotencyKey, (key) => context.herald().templates.create(fields as CreateTemplateParams, { idempotencyKey: key }));
    context.out.result(created, () => context.out.line(context.out.style.green(`Created template ${created.templateId}`)));
  });

  addTemplateOptions(template.command('update').description('store a new version; fields not given carry over').argument('<id>', 'template id (tmpl_…)')).action(
    async (id: string, flags: TemplateFlags, command: Command) => {
      const fields = templateFields(flags);
      if (Object.keys(fields).length === 0) throw usageError('Nothing to change: give at least one of --name, --category, --subject, --html, --text, --service-footer');
      const context = contextOf(command);
      const updated = await withCreationKey(flags.idempotencyKey, (key) => context.herald().templates.update(id, fields, { idempotencyKey: key }));
      context.out.result(updated, () => context.out.line(context.out.style.green(`Updated template ${updated.id}: now version ${updated.version}`)));
    },
  );

  template
    .command('restore')
    .description('make an old version current again (stored as a new version)')
    .argument('<id>', 'template id (tmpl_…)')
    .argument('<version>', 'the version to restore', integerIn(1, 1_000_000))
    .option('--idempotency-key <key>', CREATE_KEY_HELP)
    .action(async (id: string, version: number, flags: { idempotencyKey?: string }, command: Command) => {
      const context = contextOf(command);
      const restored = await withCreationKey(flags.idempotencyKey, (key) => context.herald().templates.restoreVersion(id, version, { idempotencyKey: key }));
      context.out.result(restored, () => context.out.line(context.out.style.green(`Restored version ${version} of ${id} as version ${restored.version}`)));
    });

  template
    .command('delete')
    .description('delete a template')
    .argument('<id>', 'template id (tmpl_…)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (id: string, flags: { yes?: boolean }, command: Command) => {
      const context = contextOf(command);
      if (!flags.yes) {
        if (!canPrompt(context.io, context.json)) throw usageError('Deleting needs confirmation: pass --yes');
        if (!(await confirm(context.io, `Delete template ${id} and every version of it?`))) throw cancelled();
      }
      await context.herald().templates.delete(id);
      context.out.result({ deleted: true, id }, () => context.out.line(context.out.style.green(`Deleted template ${id}`)));
    });
}
