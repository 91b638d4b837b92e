import type { RequestCore, RequestOptions } from '../request.js';
import type { Channel } from './notifications.js';

/** Contacts verified elsewhere; null removes one, omitted keeps it. */
export interface ImportIdentityParams {
  wallet: string;
  email?: string | null;
  /** E.164, e.g. +14155550123. */
  phone?: string | null;
  /** Digits, as a string. */
  telegramChatId?: string | null;
}

export interface ImportedIdentity {
  wallet: string;
  /** The wallet's verified channels after the import. */
  channels: Channel[];
}

/** Operator import of wallet identities; part of HeraldAdmin. */
export class AdminIdentities {
  constructor(private readonly core: RequestCore) {}

  /**
   * Registers a wallet with contacts already verified (no codes are sent).
   * @example await admin.identities.import({ wallet, email: 'holder@example.com', telegramChatId: '424242' });
   */
  import(params: ImportIdentityParams, options?: RequestOptions): Promise<ImportedIdentity> {
    return this.core.request({ method: 'POST', path: '/v1/admin/identities', body: params, answer: { wallet: 'string', channels: 'array' } }, options);
  }
}
