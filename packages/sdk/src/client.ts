import { RequestCore, type FetchLike } from './request.js';
import { Account } from './resources/account.js';
import { AdminIdentities } from './resources/admin-identities.js';
import { AdminSandbox } from './resources/admin-sandbox.js';
import { AdminKeys } from './resources/admin-keys.js';
import { AdminProtocols } from './resources/admin-protocols.js';
import { Broadcasts } from './resources/broadcasts.js';
import { HealthResource } from './resources/health.js';
import { Identities } from './resources/identities.js';
import { Notifications } from './resources/notifications.js';
import { Receipts } from './resources/receipts.js';
import { Reporting } from './resources/reporting.js';
import { Sandbox } from './resources/sandbox.js';
import { Schedules } from './resources/schedules.js';
import { Subscriptions } from './resources/subscriptions.js';
import { Templates } from './resources/templates.js';
import { Wallets } from './resources/wallets.js';
import { Webhooks } from './resources/webhook-endpoints.js';

export { HeraldApiError, HeraldError, HeraldNetworkError, HeraldWaitTimeoutError, type NetworkErrorKind } from './errors.js';
export {
  DEFAULT_BASE_URL,
  IDEMPOTENCY_KEY_HEADER,
  responseOf,
  type CreateOptions,
  type FetchLike,
  type RateLimitInfo,
  type RequestOptions,
  type ResponseInfo,
} from './request.js';
export { SDK_VERSION } from './version.js';
export type { ListRequestsParams, Protocol, RequestLogEntry, RequestLogPage, Tier, Usage } from './resources/account.js';
export type { ChannelProviders, Health } from './resources/health.js';
export type {
  AdminProtocol,
  CreatedProtocol,
  CreateProtocolParams,
  ListProtocolsParams,
  ProtocolList,
  UpdateProtocolParams,
} from './resources/admin-protocols.js';
export type { ApiKey, ApiKeyList, CreatedApiKey, KeyEnvironment } from './resources/admin-keys.js';
export type { ImportedIdentity, ImportIdentityParams } from './resources/admin-identities.js';
export type { AdminCapturedMessage, AdminCapturedMessageList, ListAdminCapturedMessagesParams } from './resources/admin-sandbox.js';
export { FINAL_STATUSES, lastReadOf } from './resources/notifications.js';
export type {
  BulkResult,
  BulkSubmission,
  Category,
  Channel,
  Environment,
  ListNotificationsParams,
  Notification,
  NotificationAttempt,
  NotificationList,
  NotificationListItem,
  NotificationParams,
  NotificationStatus,
  Preview,
  PreviewParams,
  Priority,
  ReceiptStatus,
  SendOptions,
  Submission,
  SubmissionStatus,
  WaitForDeliveryOptions,
} from './resources/notifications.js';
export type { CapturedMessage, CapturedMessageList, ListCapturedMessagesParams } from './resources/sandbox.js';
export type { WalletStatus } from './resources/wallets.js';
export type {
  Challenge,
  ChallengePurpose,
  ChannelState,
  DeleteIdentityParams,
  RegisteredIdentity,
  RegisterIdentityParams,
  VerifiedContact,
  VerifyContactParams,
} from './resources/identities.js';
export type { SubscribeParams, Subscription } from './resources/subscriptions.js';
export type {
  CreatedWebhook,
  CreateWebhookParams,
  EventType,
  RotatedWebhook,
  RotateSecretParams,
  UpdateWebhookParams,
  Webhook,
  WebhookDetail,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookDeliveryList,
  WebhookEvent,
} from './resources/webhook-endpoints.js';
export type {
  CreatedSchedule,
  CronScheduleParams,
  OneTimeScheduleParams,
  Schedule,
  ScheduledNotification,
  ScheduleList,
  ScheduleListItem,
  ScheduleRun,
  ScheduleStatus,
} from './resources/schedules.js';
export type {
  CreateTemplateParams,
  ServiceFooter,
  Template,
  TemplateList,
  TemplateListItem,
  TemplateVersion,
  UpdateTemplateParams,
} from './resources/templates.js';
export type { Broadcast, BroadcastAccepted, BroadcastParams } from './resources/broadcasts.js';
export type { Analytics, AnalyticsPeriod, Audience, Engagement, EngagementParams } from './resources/reporting.js';

/** Settings shared by Herald and HeraldAdmin. */
export interface ClientOptions {
  /** Gateway address; default `http://localhost:3000`. */
  baseUrl?: string | undefined;
  /** Limit per attempt in milliseconds; default 30 000. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt on network errors, 5xx and 429; default 2, 0 disables. */
  maxRetries?: number | undefined;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchLike | undefined;
  /** Replaces the default User-Agent, e.g. to name your integration. */
  userAgent?: string | undefined;
}

export interface HeraldOptions extends ClientOptions {
  /**
   * `hrld_live_…` or `hrld_test_…`. Only `health` and `identities` work without one: every
   * other /v1 call answers 401 `INVALID_API_KEY`. `undefined` (an unset environment variable) is none.
   */
  apiKey?: string | undefined;
}

export interface HeraldAdminOptions extends ClientOptions {
  /** The gateway's HERALD_ADMIN_TOKEN. */
  adminToken: string;
}

/**
 * The Herald API client for one protocol.
 *
 * @example
 * const herald = new Herald({ apiKey: process.env.HERALD_API_KEY, baseUrl: 'https://herald.example.com' });
 * const usage = await herald.account.getUsage();
 */
export class Herald {
  /** Protocol info, quota usage and the request log. */
  readonly account: Account;
  /** Gateway liveness and channel providers. */
  readonly health: HealthResource;
  /** Send one or many, read status records, preview, wait for delivery. */
  readonly notifications: Notifications;
  /** On-chain receipts (proofs of delivery) of notifications sent with `receipt: true`. */
  readonly receipts: Receipts;
  /** Messages the capture provider kept (sandbox keys). */
  readonly sandbox: Sandbox;
  /** Whether a wallet is registered, and its verified channels. */
  readonly wallets: Wallets;
  /** Wallet self-registration: public, needs no API key. */
  readonly identities: Identities;
  /** Which wallets follow the protocol, on which channels. */
  readonly subscriptions: Subscriptions;
  /** Endpoints that receive signed events, their delivery log and replay. */
  readonly webhooks: Webhooks;
  /** One-time and cron sends. */
  readonly schedules: Schedules;
  /** Versioned email templates (Growth tier and above). */
  readonly templates: Templates;
  /** One message to every subscriber (Growth tier and above). */
  readonly broadcasts: Broadcasts;
  /** Analytics, engagement and audience reports. */
  readonly reporting: Reporting;

  constructor(options: HeraldOptions = {}) {
    const core = new RequestCore({ ...options, token: options.apiKey });
    this.account = new Account(core);
    this.health = new HealthResource(core);
    this.notifications = new Notifications(core);
    this.receipts = new Receipts(core);
    this.sandbox = new Sandbox(core);
    this.wallets = new Wallets(core);
    this.identities = new Identities(core);
    this.subscriptions = new Subscriptions(core);
    this.webhooks = new Webhooks(core);
    this.schedules = new Schedules(core);
    this.templates = new Templates(core);
    this.broadcasts = new Broadcasts(core);
    this.reporting = new Reporting(core);
  }
}

/**
 * The operator's client for the admin API, authenticated with the gateway's admin token. Kept
 * apart from Herald so an application holding an API key never holds admin powers by accident.
 *
 * @example
 * const admin = new HeraldAdmin({ adminToken: process.env.HERALD_ADMIN_TOKEN! });
 * const { id, apiKey, sandboxApiKey } = await admin.protocols.create({ name: 'Acme', tier: 1 });
 */
export class HeraldAdmin {
  /** Protocols (accounts): create, list, read, change. */
  readonly protocols: AdminProtocols;
  /** API keys of a protocol: list, issue, revoke. */
  readonly keys: AdminKeys;
  /** Import wallet identities verified elsewhere. */
  readonly identities: AdminIdentities;
  /** Every message the capture provider kept, verification codes included. */
  readonly sandbox: AdminSandbox;

  constructor(options: HeraldAdminOptions) {
    if (typeof options?.adminToken !== 'string' || options.adminToken === '') throw new TypeError('HeraldAdmin needs adminToken, the gateway\'s HERALD_ADMIN_TOKEN');
    const core = new RequestCore({ ...options, token: options.adminToken });
    this.protocols = new AdminProtocols(core);
    this.keys = new AdminKeys(core);
    this.identities = new AdminIdentities(core);
    this.sandbox = new AdminSandbox(core);
  }
}

// The package's public surface: the entry point also offers the webhook signature helpers.
export { SIGNATURE_HEADER, signWebhookPayload, verifyWebhookSignature, type VerifyOptions } from './webhooks.js';
// Receipts slot: the standalone receipt verifier (src/receipts.ts), beside `herald.receipts.get`.
export { verifyReceipt, type Groth16Verifier, type Receipt, type ReceiptVerification, type VerifyReceiptOptions } from './receipts.js';
