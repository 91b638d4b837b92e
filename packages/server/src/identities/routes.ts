import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { corsPreflight, withCorsHeaders } from '../http/cors.js';
import { errorResponses } from '../http/schemas.js';
import { eraseIdentity } from './erase-identity.js';
import { importIdentity } from './import-identity.js';
import { issueChallenge } from './issue-challenge.js';
import { handleTelegramUpdate } from './link-telegram.js';
import { registerIdentity } from './register-identity.js';
import * as S from './schemas.js';
import { verifyContact } from './verify-contact.js';
import { walletStatus } from './wallet-status.js';

const open = { access: 'public' as const };
const tags = ['identities'];

/**
 * Wallet self-registration (public, limited per client IP), the Telegram bot webhook, the
 * protocols' read-only status view and the operator's import.
 */
export function identityRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/v1/identities/challenge',
    {
      config: open,
      onSend: withCorsHeaders,
      schema: {
        tags,
        summary: 'Get a message for the wallet to sign (5 minutes, single use)',
        security: [],
        body: S.ChallengeBody,
        response: { 200: S.ChallengeResponse, ...errorResponses(400, 429) },
      },
    },
    async (request) => issueChallenge(deps, request.body.wallet, request.body.purpose ?? 'register'),
  );

  api.post(
    '/v1/identities',
    {
      config: open,
      onSend: withCorsHeaders,
      schema: {
        tags,
        summary: 'Register a wallet or update its contacts, signed with the wallet key',
        security: [],
        body: S.RegisterBody,
        response: { 201: S.RegisterResponse, ...errorResponses(400, 401, 409, 429, 503) },
      },
    },
    async (request, reply) => reply.code(201).send(await registerIdentity(deps, request.body)),
  );

  api.post(
    '/v1/identities/verify',
    {
      config: open,
      onSend: withCorsHeaders,
      schema: {
        tags,
        summary: 'Confirm an email address or phone number with its code',
        security: [],
        body: S.VerifyBody,
        response: { 200: S.VerifyResponse, ...errorResponses(400, 404, 429) },
      },
    },
    async (request) => verifyContact(deps, request.body),
  );

  api.delete(
    '/v1/identities/:wallet',
    {
      config: open,
      onSend: withCorsHeaders,
      schema: {
        tags,
        summary: 'Erase a wallet: contacts, codes, Telegram links and every subscription (signed, purpose "delete")',
        security: [],
        params: S.WalletParams,
        body: S.DeleteBody,
        response: { 200: Type.Object({ deleted: Type.Literal(true) }), ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => eraseIdentity(deps, { wallet: request.params.wallet, nonce: request.body.nonce, signature: request.body.signature }),
  );

  // The wallet signs where it lives, in a browser or an app: these routes take no credentials
  // and may be called from any web page (http/cors.ts).
  for (const [url, method] of [
    ['/v1/identities/challenge', 'POST'],
    ['/v1/identities', 'POST'],
    ['/v1/identities/verify', 'POST'],
    ['/v1/identities/:wallet', 'DELETE'],
  ] as const) {
    corsPreflight(app, url, [method], { tags });
  }

  api.get(
    '/v1/wallets/:wallet/status',
    {
      schema: {
        tags,
        summary: 'Whether a wallet is registered and its verified channels',
        params: S.WalletParams,
        response: { 200: S.WalletStatusResponse, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => walletStatus(deps.db, request.params.wallet),
  );

  api.post(
    '/v1/admin/identities',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Import an identity whose contacts were verified elsewhere',
        body: S.ImportBody,
        response: { 201: S.ImportResponse, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await importIdentity(deps, request.body)),
  );

  // Without a secret anyone could link chats by posting fake updates, so the route does not exist.
  if (deps.config.telegramWebhookSecret) {
    api.post(
      '/v1/telegram/webhook',
      {
        // The secret-token header is checked by the guard, before the body is read, so strangers
        // learn nothing about the expected shape.
        config: { access: 'telegram' },
        schema: {
          tags,
          summary: 'Telegram Bot API webhook: links chats opened with /start <token>',
          security: [],
          body: S.TelegramUpdateBody,
          response: { 200: Type.Object({ ok: Type.Boolean() }), ...errorResponses(400, 403, 429) },
        },
      },
      async (request) => {
        await handleTelegramUpdate(deps, request.body);
        return { ok: true };
      },
    );
  }
}
