import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifySchemaCompiler } from 'fastify';
import { isWalletAddress } from '../wallet.js';
import { nothingToChange } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Bodies are JSON and keep their types: "5" is not a number. Query strings and path parameters
// arrive as text and are coerced. Unknown body fields are dropped, not refused.
const bodyAjv = addFormats(new Ajv({ removeAdditional: true, useDefaults: true, coerceTypes: false, allErrors: false, strict: false, verbose: true }));
const textAjv = addFormats(new Ajv({ removeAdditional: true, useDefaults: true, coerceTypes: true, allErrors: false, strict: false, verbose: true }));

/** ajv-formats' own address pattern, with SMTP's limit of 64 characters before the `@` (RFC 5321 §4.5.3.1.1). */
const EMAIL = fullFormats.email as RegExp;
const isEmailAddress = (value: string) => value.lastIndexOf('@') <= 64 && EMAIL.test(value);

for (const ajv of [bodyAjv, textAjv]) {
  ajv.addFormat('solana-wallet', { type: 'string', validate: isWalletAddress });
  ajv.addFormat('email', { type: 'string', validate: isEmailAddress });
}

/** Numbers in a query string or path as a person writes them: `0x10`, `1e1` and ` 10` are not. */
const DECIMAL: Record<string, RegExp> = { integer: /^-?\d+$/, number: /^-?\d+(?:\.\d+)?$/ };

/**
 * The text validator of a query string or path: ajv coerces with Number(), which reads `0x10` as
 * 16, so the numeric fields are checked for plain decimals first and refused as ajv refuses "abc".
 */
function textValidator(schema: { properties?: Record<string, { type?: unknown }> }) {
  const validate = textAjv.compile(schema as object);
  const numeric = Object.entries(schema.properties ?? {}).flatMap(([name, field]) =>
    typeof field.type === 'string' && DECIMAL[field.type] ? [{ name, type: field.type, decimal: DECIMAL[field.type] }] : [],
  );
  if (numeric.length === 0) return validate;
  const checked = (data: Record<string, unknown> | undefined) => {
    for (const { name, type, decimal } of numeric) {
      const value = data?.[name];
      if (typeof value === 'string' && !decimal.test(value)) {
        checked.errors = [{ keyword: 'type', instancePath: `/${name}`, schemaPath: '', params: { type }, message: `must be ${type}` }] as ErrorObject[];
        return false;
      }
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  };
  checked.errors = null as ErrorObject[] | null | undefined;
  return checked;
}

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  httpPart === 'body' ? (bodyAjv.compile(schema as object) as any) : (textValidator(schema as object) as any);

/** `/notifications/3/wallet` → `notifications[3].wallet` */
function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (extra) parts.push(extra);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

/** One readable sentence naming the field, from the first schema violation. */
export function describeValidationError(errors: ErrorObject[], context: string): string {
  const error = errors[0];
  if (!error) return 'Invalid request';
  const params = error.params as Record<string, any>;
  const where = context === 'body' ? 'body' : context === 'querystring' ? 'query parameter' : context === 'headers' ? 'header' : 'path parameter';
  const name = (path: string, extra?: string) => {
    const field = fieldPath(path, extra);
    return context === 'headers' ? headerName(field) : field;
  };
  const subject = name(error.instancePath) || `request ${where}`;
  // `?limit=1&limit=2` arrives as a list, which a one-value parameter refuses for its type.
  if (context === 'querystring' && Array.isArray(error.data) && /^\/[^/]+$/.test(error.instancePath)) {
    return `${subject} must be given once, not ${error.data.length} times`;
  }
  switch (error.keyword) {
    case 'minLength':
      return params.limit === 1 ? `${subject} must not be empty` : `${subject} must be at least ${params.limit} characters long`;
    case 'maxLength':
      return `${subject} must be at most ${params.limit} characters long`;
    case 'minItems':
      return `${subject} must hold at least ${count(params.limit, 'item')}`;
    case 'maxItems':
      return `${subject} must hold at most ${count(params.limit, 'item')}`;
    case 'minimum':
      return `${subject} must be at least ${params.limit}`;
    case 'maximum':
      return `${subject} must be at most ${params.limit}`;
    case 'required':
      return `${name(error.instancePath, params.missingProperty)} is required`;
    case 'type':
      return `${subject} must be ${article(params.type)}`;
    case 'enum':
      return `${name(error.instancePath)} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'const': {
      // A union of constants fails once per branch: name every value it allows, not the first.
      const allowed = errors.filter((e) => e.keyword === 'const' && e.instancePath === error.instancePath).map((e) => e.params.allowedValue as unknown);
      const field = name(error.instancePath);
      return allowed.length > 1 ? `${field} must be one of: ${allowed.join(', ')}` : `${field} must be ${JSON.stringify(params.allowedValue)}`;
    }
    case 'format':
      if (params.format === 'solana-wallet') return `${name(error.instancePath)} must be a Solana wallet address (base58, 32 bytes)`;
      return `${name(error.instancePath)} must be a valid ${params.format}`;
    case 'pattern': {
      // A pattern means little to a reader; the schema's description says what is expected.
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return `${name(error.instancePath)} must be ${description ? lowerFirst(description) : `in the expected format (${params.pattern})`}`;
    }
    case 'minProperties': {
      // The schema's own fields are what a change may set (see nothingToChange).
      const names = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      if (context === 'body' && !error.instancePath && names.length) return nothingToChange(names);
      return `${subject} ${error.message ?? 'is invalid'}`;
    }
    case 'uniqueItems':
      return `${name(error.instancePath)} must not list the same value twice (items ${Math.min(params.i, params.j)} and ${Math.max(params.i, params.j)} are the same)`;
    case 'additionalProperties':
      return `${name(error.instancePath, params.additionalProperty)} is not allowed`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

/** `idempotency-key` → `Idempotency-Key`: a header named as it is written. */
function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function article(type: string): string {
  const name = type.replace(/,/g, ' or ');
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}
