import { Type } from '@sinclair/typebox';
import { DisplayName, StringEnum } from '../http/schemas.js';
import { CategorySchema } from '../notifications/schemas.js';

const FOOTERS = ['full', 'minimal', 'none'] as const;
const FOOTER_DESCRIPTION =
  'full: why the reader got the email, the unsubscribe link and "Sent via Herald"; minimal: the unsubscribe link only; ' +
  'none: nothing, except that the unsubscribe link stays for every category but security and system';

export const ServiceFooterSchema = StringEnum(FOOTERS, { description: FOOTER_DESCRIPTION });

const source = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, description });

export const TemplateSourceFields = {
  subjectTemplate: source(998, 'Handlebars; {{variable}} values are inserted as given'),
  htmlSource: source(256 * 1024, 'Handlebars HTML; {{variable}} values are HTML-escaped; {{{…}}} is refused'),
  textSource: source(64 * 1024, 'Handlebars plain text (text part of the email, Telegram and SMS); values are inserted as given'),
};

export const CreateTemplateBody = Type.Object({
  name: DisplayName,
  category: CategorySchema,
  ...TemplateSourceFields,
  // The default is filled in, so a request leaving it out is the same request as one sending it.
  serviceFooter: Type.Optional(StringEnum(FOOTERS, { description: FOOTER_DESCRIPTION, default: 'full' })),
});

export const UpdateTemplateBody = Type.Object(
  {
    name: Type.Optional(DisplayName),
    category: Type.Optional(CategorySchema),
    subjectTemplate: Type.Optional(TemplateSourceFields.subjectTemplate),
    htmlSource: Type.Optional(TemplateSourceFields.htmlSource),
    textSource: Type.Optional(TemplateSourceFields.textSource),
    serviceFooter: Type.Optional(ServiceFooterSchema),
  },
  { minProperties: 1, description: 'Any of the fields; the new version carries every field not given over from the current version' },
);

const Version = Type.Object({ version: Type.Integer(), createdAt: Type.String({ format: 'date-time' }) });

export const TemplateRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  category: Type.String(),
  version: Type.Integer({ description: 'The current version' }),
  subjectTemplate: Type.String(),
  htmlSource: Type.String(),
  textSource: Type.String(),
  serviceFooter: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  versions: Type.Array(Version, { description: 'Every version, oldest first' }),
});

export const TemplateVersionSchema = Type.Object({
  id: Type.String(),
  version: Type.Integer(),
  current: Type.Boolean(),
  subjectTemplate: Type.String(),
  htmlSource: Type.String(),
  textSource: Type.String(),
  serviceFooter: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

export const TemplateListSchema = Type.Object({
  data: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), category: Type.String(), createdAt: Type.String({ format: 'date-time' }) })),
});

export const TemplateIdParams = Type.Object({ id: Type.String({ minLength: 1 }) });
// Versions are stored as PostgreSQL integer: a larger number is a 400, not an out-of-range 500.
export const TemplateVersionParams = Type.Object({ id: Type.String({ minLength: 1 }), version: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
