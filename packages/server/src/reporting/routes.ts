import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { errorResponses } from '../http/schemas.js';
import { buildAnalytics, buildAudience, buildEngagement } from './build-reports.js';
import { PERIODS, type Period } from './report-range.js';

const tags = ['reporting'];
const Rate = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const Count = Type.Integer({ minimum: 0 });

const Analytics = Type.Object({
  period: Type.String(),
  total_sends: Type.Integer({ description: 'Notifications created in the period, whatever their status' }),
  delivery_rate: Rate('delivered / (delivered + bounced + failed)'),
  bounce_rate: Rate('bounced / (delivered + bounced + failed)'),
  breakdown: Type.Object({ delivered: Count, failed: Count, opted_out: Count, bounced: Count }),
});

const Engagement = Type.Object({
  openRate: Rate('Delivered emails opened at least once / delivered emails'),
  clickRate: Rate('Delivered emails with at least one tracked click / delivered emails'),
  unsubscribeRate: Rate('Delivered emails whose unsubscribe link was used / delivered emails'),
  deliveredEmails: Type.Integer({ description: 'The denominator: delivered emails created in the range' }),
  startDate: Type.String({ format: 'date-time', description: 'Start of the range (included)' }),
  endDate: Type.String({ format: 'date-time', description: 'End of the range (excluded)' }),
});

const Audience = Type.Object({
  totalRegistered: Type.Integer({ description: 'Registered wallets that subscribed to the protocol, still subscribed or opted out since' }),
  broadcastableSubscribers: Type.Integer({ description: 'Active subscribers with at least one deliverable channel (what a broadcast would queue)' }),
  channelCoverage: Type.Object(
    { email: Count, telegram: Count, sms: Count },
    { description: 'Active subscribers reachable on each channel (subscribed to it and verified on it); a wallet counts once per channel' },
  ),
  registrationTrend: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Count }), {
    description: 'Audience wallets per UTC day their subscription started, the last 30 days, today included, oldest first',
  }),
});

/** GET /v1/analytics, GET /v1/engagement, GET /v1/audience. */
export function reportingRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/v1/analytics',
    {
      schema: {
        tags,
        summary: 'Delivery outcomes over the last 7, 30 or 90 days',
        querystring: Type.Object({ period: Type.Optional(Type.Unsafe<Period>({ type: 'string', enum: Object.keys(PERIODS), default: '30d' })) }),
        response: { 200: Analytics, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const { protocol, environment } = request.auth!;
      return buildAnalytics(deps, { protocolId: protocol.id, environment }, request.query.period ?? '30d');
    },
  );

  api.get(
    '/v1/engagement',
    {
      schema: {
        tags,
        summary: 'Open, click and unsubscribe rates of delivered emails',
        querystring: Type.Object({
          startDate: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD (UTC) or a date-time; default 30 days before endDate' })),
          endDate: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD (UTC, whole day included) or a date-time; default now' })),
        }),
        response: { 200: Engagement, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const { protocol, environment } = request.auth!;
      return buildEngagement(deps, { protocolId: protocol.id, environment }, request.query);
    },
  );

  api.get(
    '/v1/audience',
    { schema: { tags, summary: "The protocol's subscribers and how they can be reached", response: { 200: Audience, ...errorResponses(401, 429) } } },
    async (request) => buildAudience(deps, request.auth!.protocol.id),
  );
}
