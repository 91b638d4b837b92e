import type { Command } from 'commander';
import { usageError } from './exit-codes.js';
import { integerIn } from './parse-options.js';

export interface PagingFlags {
  page?: number;
  limit?: number;
  all?: boolean;
}

/** `--page`, `--limit` and `--all` of a list command; `what` names its items ("notifications"). */
export function withPaging(command: Command, what: string, defaultLimit: number): Command {
  return command
    .option('--page <n>', 'page, from 1', integerIn(1, 1_000_000))
    .option('--limit <n>', `${what} per page, 1-100 (default ${defaultLimit}; 100 with --all)`, integerIn(1, 100))
    .option('--all', `every page, each item once (what arrives meanwhile is left out), printed once all are read`);
}

/** `--all`: every item the SDK's listAll iterator yields (a page of `--limit` at a time). */
export async function everyItem<T>(flags: PagingFlags, items: () => AsyncIterable<T>): Promise<T[]> {
  if (flags.page !== undefined) throw usageError('--all reads every page: give --page or --all, not both');
  const out: T[] = [];
  for await (const item of items()) out.push(item);
  return out;
}

/** The line under a list: which page of how many, or that every page was read. */
export const shownLine = (page: number | undefined, shown: number, total: number): string =>
  page === undefined ? `${shown} shown (every page)` : `page ${page}, ${shown} shown of ${total}`;

/** Every item read with --all, shaped as a list's answer without a page number (`total`: how many were read). */
export const wholeList = <T>(data: T[]): { data: T[]; total: number; page?: number } => ({ data, total: data.length });
