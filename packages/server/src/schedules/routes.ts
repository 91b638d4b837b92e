import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { keyHolderOf } from '../auth/live-key.js';
import type { Deps } from '../deps.js';
import { creationKeyOf, IdempotencyKeyHeaders, keyedAnswer, refuseBodyKey } from '../creation-keys/creation-key.js';
import { methodNotAllowed } from '../http/errors.js';
import { bodyFieldRefused } from '../http/refuse-body-field.js';
import { errorResponses, pageQuery } from '../http/schemas.js';
import { cancelSchedule } from './cancel-schedule.js';
import { createCronSchedule, createOneTimeSchedule } from './create-schedule.js';
import { scheduleList, scheduleRecord } from './schedule-views.js';
import { CreatedSchedule, CronScheduleBody, OneTimeScheduleBody, ScheduleList, ScheduleParams, ScheduleRecord } from './schemas.js';

const tags = ['schedules'];
const ONE_TIME_FIELDS = Object.keys(OneTimeScheduleBody.properties);
const CRON_FIELDS = Object.keys(CronScheduleBody.properties);

/** POST /v1/schedule, POST /v1/schedule/cron, GET /v1/schedule, GET and DELETE /v1/schedule/:id. */
export function scheduleRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/v1/schedule',
    {
      preValidation: [
        refuseBodyKey('POST /v1/schedule'),
        // Ignored, the other route's defining field would make a schedule of the wrong kind.
        bodyFieldRefused('cronExpr', 'a recurring schedule is created with POST /v1/schedule/cron; this route sends once, at scheduledFor'),
      ],
      schema: {
        tags,
        summary: 'Schedule one notification at a wall-clock date-time in a time zone',
        headers: IdempotencyKeyHeaders,
        body: OneTimeScheduleBody,
        response: { 201: CreatedSchedule, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { protocol, environment } = request.auth!;
      const key = creationKeyOf(request, 'POST /v1/schedule', ONE_TIME_FIELDS);
      return reply.code(201).send(keyedAnswer(reply, await createOneTimeSchedule(deps, { protocol, environment }, request.body, key)));
    },
  );

  api.post(
    '/v1/schedule/cron',
    {
      preValidation: [
        refuseBodyKey('POST /v1/schedule/cron'),
        bodyFieldRefused('scheduledFor', 'a one-time schedule is created with POST /v1/schedule; this route sends at every occurrence of cronExpr'),
      ],
      schema: {
        tags,
        summary: 'Schedule a notification at every occurrence of a five-field cron expression in a time zone',
        headers: IdempotencyKeyHeaders,
        body: CronScheduleBody,
        response: { 201: CreatedSchedule, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { protocol, environment } = request.auth!;
      const key = creationKeyOf(request, 'POST /v1/schedule/cron', CRON_FIELDS);
      return reply.code(201).send(keyedAnswer(reply, await createCronSchedule(deps, { protocol, environment }, request.body, key)));
    },
  );

  api.get(
    '/v1/schedule',
    {
      schema: {
        tags,
        summary: "The protocol's schedules, newest first",
        querystring: Type.Object(pageQuery(20)),
        response: { 200: ScheduleList, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => scheduleList(deps, request.auth!.protocol.id, request.query.page, request.query.limit),
  );

  api.get(
    '/v1/schedule/:id',
    {
      schema: {
        tags,
        summary: 'One schedule with its most recent runs',
        params: ScheduleParams,
        response: { 200: ScheduleRecord, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => scheduleRecord(deps, request.auth!.protocol.id, request.params.id),
  );

  api.delete(
    '/v1/schedule/:id',
    {
      schema: {
        tags,
        summary: 'Cancel a schedule; cancelled is false when it had already ended or been cancelled',
        params: ScheduleParams,
        response: { 200: Type.Object({ cancelled: Type.Boolean() }), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => cancelSchedule(deps, keyHolderOf(request), request.params.id),
  );

  // /v1/schedule/cron is a path of its own (POST only) that GET and DELETE /v1/schedule/:id would
  // also match: its other methods answer 405, as any known path does (see the not-found handler).
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: '/v1/schedule/cron',
    config: { access: 'public' },
    schema: { hide: true },
    handler: async (request) => {
      throw methodNotAllowed(request.method, '/v1/schedule/cron', ['POST']);
    },
  });
}
