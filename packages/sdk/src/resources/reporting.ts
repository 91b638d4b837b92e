import type { RequestCore, RequestOptions } from '../request.js';

export type AnalyticsPeriod = '7d' | '30d' | '90d';

/** Delivery outcomes; rates are fractions in [0, 1] of delivered + bounced + failed. */
export interface Analytics {
  period: AnalyticsPeriod;
  /** Notifications created in the period, whatever their status. */
  total_sends: number;
  delivery_rate: number;
  bounce_rate: number;
  breakdown: { delivered: number; failed: number; opted_out: number; bounced: number };
}

/** Rates (fractions in [0, 1]) of delivered emails created in [startDate, endDate). */
export interface Engagement {
  openRate: number;
  clickRate: number;
  unsubscribeRate: number;
  /** The denominator. */
  deliveredEmails: number;
  startDate: string;
  endDate: string;
}

export interface EngagementParams {
  /** YYYY-MM-DD (UTC) or a date-time with offset; default 30 days before endDate. */
  startDate?: string;
  /** YYYY-MM-DD (the whole day included) or a date-time; default now. */
  endDate?: string;
}

export interface Audience {
  totalRegistered: number;
  /** Active subscribers with a deliverable channel: what a broadcast would queue. */
  broadcastableSubscribers: number;
  channelCoverage: { email: number; telegram: number; sms: number };
  /** The last 30 UTC days, oldest first. */
  registrationTrend: { date: string; count: number }[];
}

/**
 * Read-only reports of the key's protocol; analytics and engagement cover the key's environment
 * only (a sandbox key reports sandbox traffic).
 */
export class Reporting {
  constructor(private readonly core: RequestCore) {}

  /**
   * Delivery outcomes over the last 7, 30 (default) or 90 days.
   * @example const { delivery_rate, breakdown } = await herald.reporting.analytics({ period: '7d' });
   */
  analytics(params: { period?: AnalyticsPeriod } = {}, options?: RequestOptions): Promise<Analytics> {
    return this.core.request({ method: 'GET', path: '/v1/analytics', query: { period: params.period }, answer: { total_sends: 'number', breakdown: 'object' } }, options);
  }

  /**
   * Open, click and unsubscribe rates of delivered emails.
   * @example const { openRate } = await herald.reporting.engagement({ startDate: '2026-01-01', endDate: '2026-01-31' });
   */
  engagement(params: EngagementParams = {}, options?: RequestOptions): Promise<Engagement> {
    return this.core.request({ method: 'GET', path: '/v1/engagement', query: { startDate: params.startDate, endDate: params.endDate }, answer: { openRate: 'number', clickRate: 'number', unsubscribeRate: 'number' } }, options);
  }

  /**
   * Subscribers and how they can be reached.
   * @example const { broadcastableSubscribers, channelCoverage } = await herald.reporting.audience();
   */
  audience(options?: RequestOptions): Promise<Audience> {
    return this.core.request({ method: 'GET', path: '/v1/audience', answer: { totalRegistered: 'number', channelCoverage: 'object', registrationTrend: 'objects' } }, options);
  }
}
