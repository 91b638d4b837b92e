import type { Command } from 'commander';
import { integerIn } from '../parse-options.js';
import type { ContextOf } from './admin.js';

interface RequestsFlags {
  page?: number;
  limit?: number;
  status?: number;
  endpoint?: string;
}

/** `herald requests`: the API request log, newest first. */
export function registerRequests(program: Command, contextOf: ContextOf): void {
  program
    .command('requests')
    .description("your protocol's API request log, newest first")
    .option('--page <n>', 'page, from 1', integerIn(1, 1_000_000))
    .option('--limit <n>', 'entries per page, 1-100 (default 50)', integerIn(1, 100))
    .option('--status <code>', 'only requests answered with this HTTP status', integerIn(100, 599))
    .option('--endpoint <text>', 'only requests whose path contains this text')
    .action(async (flags: RequestsFlags, command: Command) => {
      const context = contextOf(command);
      const page = await context.herald().account.listRequests({
        page: flags.page,
        limit: flags.limit,
        statusCode: flags.status,
        endpoint: flags.endpoint,
      });
      const { out } = context;
      out.result(page, () => {
        const colourStatus = (status: number) => (status >= 500 ? out.style.red : status >= 400 ? out.style.yellow : out.style.green)(String(status));
        out.table(
          ['TIME', 'METHOD', 'STATUS', 'LATENCY', 'ENDPOINT'],
          page.items.map((r) => [r.timestamp, r.method, colourStatus(r.statusCode), `${r.latencyMs} ms`, r.endpoint]),
        );
        out.line(out.style.dim(`page ${page.page}, ${page.items.length} shown of ${page.total}`));
      });
    });
}
