import type { AnalyticsPeriod } from '@herald/sdk';
import { Option, type Command } from 'commander';
import type { ContextOf } from './admin.js';

const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/** `herald analytics | engagement | audience`: read-only reports of your protocol. */
export function registerReports(program: Command, contextOf: ContextOf): void {
  program
    .command('analytics')
    .description('delivery outcomes over the last 7, 30 or 90 days (of your key’s environment)')
    .addOption(new Option('--period <period>', 'how far back').choices(['7d', '30d', '90d']).default('30d'))
    .action(async (flags: { period: AnalyticsPeriod }, command: Command) => {
      const context = contextOf(command);
      const report = await context.herald().reporting.analytics({ period: flags.period });
      const { out } = context;
      out.result(report, () =>
        out.fields([
          ['period', report.period],
          ['sends', report.total_sends.toLocaleString('en')],
          ['delivery rate', percent(report.delivery_rate)],
          ['bounce rate', percent(report.bounce_rate)],
          ['delivered', report.breakdown.delivered.toLocaleString('en')],
          ['bounced', report.breakdown.bounced.toLocaleString('en')],
          ['failed', report.breakdown.failed.toLocaleString('en')],
          ['opted out', report.breakdown.opted_out.toLocaleString('en')],
        ]),
      );
    });

  program
    .command('engagement')
    .description('open, click and unsubscribe rates of delivered emails')
    .option('--start-date <date>', 'YYYY-MM-DD (UTC) or a date-time with offset (default 30 days before the end)')
    .option('--end-date <date>', 'YYYY-MM-DD, the whole day included, or a date-time (default now)')
    .action(async (flags: { startDate?: string; endDate?: string }, command: Command) => {
      const context = contextOf(command);
      const report = await context.herald().reporting.engagement(flags);
      const { out } = context;
      out.result(report, () =>
        out.fields([
          ['from', report.startDate],
          ['until', report.endDate],
          ['delivered emails', report.deliveredEmails.toLocaleString('en')],
          ['open rate', percent(report.openRate)],
          ['click rate', percent(report.clickRate)],
          ['unsubscribe rate', percent(report.unsubscribeRate)],
        ]),
      );
    });

  program
    .command('audience')
    .description('your subscribers and how they can be reached')
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command);
      const report = await context.herald().reporting.audience();
      const { out } = context;
      out.result(report, () => {
        out.fields([
          ['registered', report.totalRegistered.toLocaleString('en')],
          ['broadcastable', report.broadcastableSubscribers.toLocaleString('en')],
          ['email', report.channelCoverage.email.toLocaleString('en')],
          ['telegram', report.channelCoverage.telegram.toLocaleString('en')],
          ['sms', report.channelCoverage.sms.toLocaleString('en')],
        ]);
        const recent = report.registrationTrend.filter((day) => day.count > 0);
        out.line(out.style.dim(`${recent.reduce((sum, day) => sum + day.count, 0)} new subscribers in the last ${report.registrationTrend.length} days`));
      });
    });
}
