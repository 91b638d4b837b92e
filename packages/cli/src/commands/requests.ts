import type { RequestLogEntry } from '@herald/sdk';
import type { Command } from 'commander';
import { integerIn } from '../parse-options.js';
import { everyItem, shownLine, withPaging, type PagingFlags } from '../paging.js';
import type { ContextOf } from './admin.js';

interface RequestsFlags extends PagingFlags {
  status?: number;
  endpoint?: string;
}

/** `herald requests`: the API request log, newest first. */
export function registerRequests(program: Command, contextOf: ContextOf): void {
  withPaging(program.command('requests').description("your protocol's API request log, newest first"), 'entries', 50)
    .option('--status <code>', 'only requests answered with this HTTP status', integerIn(100, 599))
    .option('--endpoint <text>', 'only requests whose path contains this text')
    .action(async (flags: RequestsFlags, command: Command) => {
      const context = contextOf(command);
      const herald = context.herald();
      const filters = { limit: flags.limit, statusCode: flags.status, endpoint: flags.endpoint };
      const page: { items: RequestLogEntry[]; total: number; page?: number } = flags.all
        ? await everyItem(flags, () => herald.account.listAllRequests(filters)).then((items) => ({ items, total: items.length }))
        : await herald.account.listRequests({ ...filters, page: flags.page });
      const { out } = context;
      out.result(page, () => {
        const colourStatus = (status: number) => (status >= 500 ? out.style.red : status >= 400 ? out.style.yellow : out.style.green)(String(status));
        out.table(
          ['TIME', 'METHOD', 'STATUS', 'LATENCY', 'ENDPOINT'],
          page.items.map((r) => [r.timestamp, r.method, colourStatus(r.statusCode), `${r.latencyMs} ms`, r.endpoint]),
        );
        out.line(out.style.dim(shownLine(page.page, page.items.length, page.total)));
      });
    });
}
