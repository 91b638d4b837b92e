import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { Environment } from './api-keys.js';

/** Who asks for a change: the key's protocol and environment. */
export interface KeyHolder {
  protocolId: string;
  environment: Environment;
}

/** The key holder of an authenticated request. */
export function keyHolderOf(request: FastifyRequest): KeyHolder {
  return { protocolId: request.auth!.protocol.id, environment: request.auth!.environment };
}

/**
 * Refuses (403) a sandbox key's change of something production depends on: a test key, often kept
 * in less guarded places, may send and read in its own environment, not alter what live sends use
 * or where their events go. `doing` names the change, `why` what production takes from it.
 */
export function requireLiveKey(environment: Environment, doing: string, why: string): void {
  if (environment !== 'production') throw new ApiError('FORBIDDEN', `${doing} needs a live key (hrld_live_…): ${why}`);
}
