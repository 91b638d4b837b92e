import { readFileSync } from 'node:fs';
import { usageError } from './exit-codes.js';
import { readStdin } from './prompt.js';

/** Parses JSON from a file or standard input; unreadable or invalid input is bad usage (exit 2). */
export async function readJsonInput(source: { file?: string; stdin?: NodeJS.ReadStream }): Promise<unknown> {
  let text: string;
  let name: string;
  if (source.file !== undefined) {
    name = source.file;
    try {
      text = readFileSync(source.file, 'utf8');
    } catch (error) {
      throw usageError(`Cannot read ${source.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  } else {
    name = 'standard input';
    text = await readStdin(source.stdin!);
  }
  if (!text.trim()) throw usageError(`${name} is empty: expected JSON`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${name} is not valid JSON: ${(error as Error).message}`);
  }
}

/** A `--template-variables` style flag: a JSON object given inline. */
export function parseJsonObject(flag: string, value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw usageError(`${flag} must be a JSON object, e.g. '{"name":"Ada"}'`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw usageError(`${flag} must be a JSON object, e.g. '{"name":"Ada"}'`);
  return parsed as Record<string, unknown>;
}

/** One JSON object from standard input, as `--from-stdin` takes it. */
export async function readStdinObject(stdin: NodeJS.ReadStream, hint = ''): Promise<Record<string, unknown>> {
  const input = await readJsonInput({ stdin });
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw usageError(`Standard input must hold one JSON object${hint}`);
  return input as Record<string, unknown>;
}
