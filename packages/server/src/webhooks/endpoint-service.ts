import { isIPv4 } from 'node:net';
import { requireLiveKey, type KeyHolder } from '../auth/live-key.js';
import { createOnce, keptAnswer, type CreationKey, type Keyed } from '../creation-keys/creation-key.js';
import type { Deps } from '../deps.js';
import type { EventType } from '../events/record-event.js';
import { ApiError, requireSomeChange } from '../http/errors.js';
import { newId } from '../ids.js';
import { tierOf } from '../tiers.js';
import {
  countEndpoints,
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  lockProtocol,
  rotateEndpointSecret,
  updateEndpoint,
  type EndpointRow,
} from './endpoint-store.js';
import { resolveWebhookTarget, TargetRefusedError, webhookUrlProblem } from './resolve-target.js';
import { DEFAULT_PREVIOUS_SECRET_SECONDS, newWebhookSecret, previousSecretExpiry } from './webhook-secret.js';

export interface EndpointView {
  id: string;
  url: string;
  events: EventType[];
  isActive: boolean;
}

export function endpointView(row: EndpointRow): EndpointView {
  return { id: row.id, url: row.url, events: row.events as EventType[], isActive: row.is_active };
}

/**
 * What a URL registered now must also be, beyond what every send checks (webhookUrlProblem): an
 * endpoint stored before these rules keeps being called.
 */
function newUrlProblem(raw: string): string | null {
  // The parser drops spaces at the ends and line breaks inside: the URL stored would not be the
  // address called.
  if (/\s/.test(raw)) return 'url must not contain spaces or line breaks';
  // Control characters are dropped or percent-encoded by the parser: the same mismatch.
  if (/[\u0000-\u001f\u007f]/.test(raw)) return 'url must not contain control characters';
  // A backslash is read as a slash in an http(s) URL: `https://a.example\in` calls `/in`.
  if (raw.includes('\\')) return 'url must not contain a backslash (write / instead)';
  // `http:host/path` and `http:/host/path` are repaired into `http://host/path` by the parser;
  // an absolute URL (RFC 3986) names its host after `//`.
  if (!/^https?:\/\//i.test(raw)) return 'url must start with http:// or https://';
  // `http:///host/path` has an empty host, which the parser repairs into `http://host/path`.
  const [, authority, path] = /^https?:\/\/([^/?#]*)([^?#]*)/i.exec(raw)!;
  if (!authority) return 'url must name its host right after //';
  // `http://@host/` has an empty user name, which the parser drops.
  if (authority.includes('@')) return 'url must not contain a user name or password';
  // A fragment is the receiver's own part of a URL: no HTTP request carries it.
  if (raw.includes('#')) return 'url must not contain a fragment (#…): no request carries it to the receiver';
  // `/a/../b` is called as `/b`, and `%2e` is a dot to the parser.
  if (path.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) return 'url must not contain . or .. path segments';
  // `0x7f.1` or `2130706433` is called as 127.0.0.1: the address listed must be the one called.
  const { hostname, port } = new URL(raw);
  const written = authority.replace(/:\d*$/, '').toLowerCase();
  if (isIPv4(hostname) && written !== hostname) return `url must write an IPv4 address as four decimal numbers (${written} is ${hostname})`;
  if (port === '0') return 'url must not use port 0, which no receiver can listen on';
  return null;
}

/**
 * Refuses a URL that is not absolute http(s), or (unless private targets are allowed) whose host
 * is or resolves to a non-public address. The same check runs again before every send.
 */
async function assertWebhookUrl(deps: Deps, url: string): Promise<void> {
  const problem = webhookUrlProblem(url) ?? newUrlProblem(url);
  if (problem) throw new ApiError('VALIDATION_ERROR', problem);
  if (deps.config.allowPrivateWebhooks) return;
  try {
    await resolveWebhookTarget(url, { allowPrivate: false });
  } catch (error) {
    if (error instanceof TargetRefusedError) throw new ApiError('VALIDATION_ERROR', `url is refused: ${error.message}`);
    throw error;
  }
}

export async function requireEndpoint(deps: Deps, protocolId: string, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(deps.db, protocolId, id);
  if (!row) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook ${id} not found`);
  return row;
}

type CreatedEndpoint = EndpointView & { secret: string };

/** An answer kept with an Idempotency-Key holds its secret sealed: the one given out is opened. */
function openSecret<T extends { secret: string }>(deps: Deps, { answer, replayed }: Keyed<T>): Keyed<T> {
  return { answer: { ...answer, secret: deps.secrets.decrypt(answer.secret) }, replayed };
}

/** How long a repeat of a call whose answer holds a signing secret is given that answer again (Stripe keeps keys 24 hours). */
export const SECRET_REPLAY_MS = 24 * 60 * 60 * 1000;

/**
 * The first answer of a registration or rotation, for a repeat of it: within a day of it, and
 * while the secret it holds is still the endpoint's. A live key already lets its holder change
 * the endpoint, but a secret read back later would let it sign requests to the receiver unseen,
 * so a repeat of an old call gets a 409 rather than the secret. None for a key not used yet.
 */
async function secretAnsweredBefore<T extends { id: string; secret: string }>(deps: Deps, protocolId: string, key: CreationKey | undefined): Promise<Keyed<T> | undefined> {
  const kept = await keptAnswer<T>(deps.db, key);
  if (!kept) return undefined;
  const refused = (why: string) =>
    new ApiError('DUPLICATE_IDEMPOTENCY_KEY', `Idempotency-Key "${key!.key}" was already used, ${why}: its answer, which holds a signing secret, is not given again; use a new key`);
  if (deps.now().getTime() - kept.keptAt.getTime() > SECRET_REPLAY_MS) throw refused('more than 24 hours ago');
  const endpoint = await findEndpoint(deps.db, protocolId, kept.answer.id);
  const answered = openSecret(deps, { answer: kept.answer, replayed: true });
  if (!endpoint || deps.secrets.decrypt(endpoint.secret_enc) !== answered.answer.secret) throw refused('and the endpoint has another secret since (or is deleted)');
  return answered;
}

/**
 * Registers an endpoint within the tier's cap; the answer carries the secret, the only time it is
 * shown, and, with an Idempotency-Key, the time a repeat of the request is answered. The answer
 * kept with the key holds the secret sealed, as the endpoint does.
 */
export async function createEndpoint(
  deps: Deps,
  sender: KeyHolder & { tier: number },
  input: { url: string; events: EventType[]; isActive?: boolean },
  key?: CreationKey,
): Promise<Keyed<CreatedEndpoint>> {
  await requireLiveSender(deps, sender, 'Registering a webhook endpoint');
  const before = await secretAnsweredBefore<CreatedEndpoint>(deps, sender.protocolId, key);
  if (before) return before;
  const protocol = { id: sender.protocolId, tier: sender.tier };
  await assertWebhookUrl(deps, input.url);
  const secret = deps.secrets.encrypt(newWebhookSecret());
  const tier = tierOf(protocol.tier);
  const created = await createOnce(deps.db, key, deps.now(), async (tx): Promise<CreatedEndpoint> => {
    await lockProtocol(tx, protocol.id);
    if ((await countEndpoints(tx, protocol.id)) >= tier.webhookEndpoints) {
      const allowance = `${tier.webhookEndpoints} webhook endpoint${tier.webhookEndpoints === 1 ? '' : 's'}`;
      throw new ApiError('WEBHOOK_LIMIT_REACHED', `The ${tier.name} tier allows ${allowance}; delete one or upgrade to register another`);
    }
    const row = await insertEndpoint(tx, {
      id: newId.webhook(),
      protocol_id: protocol.id,
      url: input.url,
      events: input.events,
      is_active: input.isActive ?? true,
      secret_enc: secret,
      now: deps.now(),
    });
    return { ...endpointView(row), secret };
  });
  return openSecret(deps, created);
}

export async function listEndpointViews(deps: Deps, protocolId: string): Promise<EndpointView[]> {
  return (await listEndpoints(deps.db, protocolId)).map(endpointView);
}

export async function changeEndpoint(
  deps: Deps,
  sender: KeyHolder,
  id: string,
  changes: { url?: string; events?: EventType[]; isActive?: boolean },
): Promise<EndpointView> {
  requireSomeChange(changes, ['url', 'events', 'isActive']);
  const { protocolId } = sender;
  await requireEndpoint(deps, protocolId, id);
  await requireLiveSender(deps, sender, 'Changing a webhook endpoint');
  if (changes.url !== undefined) await assertWebhookUrl(deps, changes.url);
  const row = await updateEndpoint(deps.db, protocolId, id, { ...changes, now: deps.now() });
  if (!row) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook ${id} not found`);
  return endpointView(row);
}

/** GET /v1/webhooks/:id: the endpoint, with its dates, why it is inactive, and its rotation's end. */
export async function endpointDetail(deps: Deps, protocolId: string, id: string) {
  const row = await requireEndpoint(deps, protocolId, id);
  return {
    ...endpointView(row),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    disabledReason: row.is_active ? null : row.disabled_reason,
    previousSecretExpiresAt: previousExpiry(row, deps.now()),
  };
}

const previousExpiry = (row: EndpointRow, now: Date) => previousSecretExpiry(row, now)?.toISOString() ?? null;

/**
 * Endpoints serve both environments, so where production events go and how they are signed is
 * changed with a live key only: a test key, often kept in less guarded places, must not register,
 * re-point, delete or re-key an endpoint that receives them (403). Another protocol's or an unknown
 * id is a 404 first.
 */
export async function requireLiveSender(deps: Deps, sender: KeyHolder, doing: string, id?: string): Promise<void> {
  if (sender.environment === 'production') return;
  if (id !== undefined) await requireEndpoint(deps, sender.protocolId, id);
  requireLiveKey(sender.environment, doing, 'webhook endpoints also receive production events');
}

/**
 * Gives the endpoint a new secret, shown in this answer only. The secret replaced stays valid for
 * `previousSecretExpiresInSeconds` (requests are signed with both until then, so a receiver can
 * switch without refusing an event); a secret replaced by an earlier rotation is dropped.
 */
export async function rotateSecret(
  deps: Deps,
  sender: KeyHolder,
  id: string,
  input: { previousSecretExpiresInSeconds?: number } | undefined,
  key?: CreationKey,
): Promise<Keyed<RotatedEndpoint>> {
  const { protocolId } = sender;
  await requireLiveSender(deps, sender, 'Rotating a webhook secret', id);
  // A repeat of a rotation whose answer was lost answers it again rather than rotating once more,
  // which would leave the receiver's secret (the previous one) out of the grace period.
  const before = await secretAnsweredBefore<RotatedEndpoint>(deps, protocolId, key);
  if (before) return before;
  const secret = deps.secrets.encrypt(newWebhookSecret());
  const now = deps.now();
  const keepMs = (input?.previousSecretExpiresInSeconds ?? DEFAULT_PREVIOUS_SECRET_SECONDS) * 1000;
  const rotated = await createOnce(deps.db, key, now, async (tx): Promise<RotatedEndpoint> => {
    const row = await rotateEndpointSecret(tx, protocolId, id, { secretEnc: secret, previousExpiresAt: new Date(now.getTime() + keepMs), now });
    if (!row) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook ${id} not found`);
    return { ...endpointView(row), secret, previousSecretExpiresAt: previousExpiry(row, now) };
  });
  return openSecret(deps, rotated);
}

type RotatedEndpoint = EndpointView & { secret: string; previousSecretExpiresAt: string | null };

/** Deletes the endpoint with its delivery log. */
export async function removeEndpoint(deps: Deps, sender: KeyHolder, id: string): Promise<void> {
  await requireLiveSender(deps, sender, 'Deleting a webhook endpoint', id);
  if (!(await deleteEndpoint(deps.db, sender.protocolId, id))) throw new ApiError('WEBHOOK_NOT_FOUND', `Webhook ${id} not found`);
}
