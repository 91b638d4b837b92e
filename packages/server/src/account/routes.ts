import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { errorResponses } from '../http/schemas.js';
import { periodOf, sendsThisPeriod } from '../limits/quota.js';
import { tierOf } from '../tiers.js';

const ProtocolSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tier: Type.Integer({ minimum: 0, maximum: 3 }),
  tier_name: Type.String(),
  sends_this_period: Type.Integer(),
  subscription_expires_at: Type.String({ format: 'date-time' }),
});

const UsageSchema = Type.Object({
  tier: Type.Integer(),
  usage: Type.Integer(),
  remaining: Type.Integer(),
  overageEnabled: Type.Boolean(),
  resetsAt: Type.String({ format: 'date-time' }),
});

/** GET /v1/protocols/me and GET /v1/usage: the caller's own account. */
export function accountRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/protocols/me',
    { schema: { tags: ['account'], summary: 'The authenticated protocol', response: { 200: ProtocolSchema, ...errorResponses(401, 429) } } },
    async (request) => {
      const { protocol } = request.auth!;
      return {
        id: protocol.id,
        name: protocol.name,
        tier: protocol.tier,
        tier_name: tierOf(protocol.tier).name,
        sends_this_period: await sendsThisPeriod(deps.db, protocol.id, deps.now()),
        subscription_expires_at: protocol.subscription_expires_at.toISOString(),
      };
    },
  );

  app.get(
    '/v1/usage',
    { schema: { tags: ['account'], summary: 'Sends used and left this calendar month (UTC)', response: { 200: UsageSchema, ...errorResponses(401, 429) } } },
    async (request) => {
      const { protocol } = request.auth!;
      const now = deps.now();
      const usage = await sendsThisPeriod(deps.db, protocol.id, now);
      return {
        tier: protocol.tier,
        usage,
        remaining: Math.max(0, tierOf(protocol.tier).monthlySends - usage),
        overageEnabled: protocol.overage_enabled,
        resetsAt: periodOf(now).next.toISOString(),
      };
    },
  );
}
