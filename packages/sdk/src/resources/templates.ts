import type { AnswerShape } from '../answer-shape.js';
import { createCall, type CreateOptions, type RequestCore, type RequestOptions } from '../request.js';
import type { Category } from './notifications.js';

/**
 * full: why the reader got the email, the unsubscribe link and "Sent via Herald"; minimal: the
 * unsubscribe link only; none: nothing, except the unsubscribe link for categories other than
 * security and system.
 */
export type ServiceFooter = 'full' | 'minimal' | 'none';

export interface CreateTemplateParams {
  name: string;
  category: Category;
  /** Handlebars; `{{variable}}` values inserted as given. */
  subjectTemplate: string;
  /** Handlebars HTML; `{{variable}}` values are HTML-escaped, `{{{…}}}` is refused. */
  htmlSource: string;
  /** Handlebars plain text: the email's text part, Telegram and SMS. */
  textSource: string;
  /** Default `full`. */
  serviceFooter?: ServiceFooter;
}

/** Any of the fields (at least one); the rest carry over from the current version. */
export type UpdateTemplateParams = Partial<CreateTemplateParams>;

export interface TemplateListItem {
  /** `tmpl_…` */
  id: string;
  name: string;
  category: Category;
  createdAt: string;
}

export interface TemplateList {
  data: TemplateListItem[];
}

/** A template: its current version, and the list of every version. */
export interface Template {
  id: string;
  name: string;
  category: Category;
  /** The current version. */
  version: number;
  subjectTemplate: string;
  htmlSource: string;
  textSource: string;
  serviceFooter: ServiceFooter;
  createdAt: string;
  updatedAt: string;
  /** Oldest first. */
  versions: { version: number; createdAt: string }[];
}

/** One stored version. */
export interface TemplateVersion {
  id: string;
  version: number;
  current: boolean;
  subjectTemplate: string;
  htmlSource: string;
  textSource: string;
  serviceFooter: ServiceFooter;
  createdAt: string;
}

const templatePath = (id: string) => `/v1/templates/email/${encodeURIComponent(id)}`;
const versionPath = (id: string, version: number) => `${templatePath(id)}/versions/${encodeURIComponent(String(version))}`;
const TEMPLATE: AnswerShape = { id: 'string', version: 'number', versions: 'objects' };

/**
 * Email templates, versioned; Growth tier and above (others get 403 `TIER_REQUIRED`). Live sends
 * render them, so `create`, `update`, `delete` and `restoreVersion` need a live key (403 `FORBIDDEN`).
 */
export class Templates {
  constructor(private readonly core: RequestCore) {}

  /**
   * Creates a template (its version 1). With `options.idempotencyKey` a repeat creates nothing
   * more and answers the first answer, so the call is retried like a GET.
   * @example const { templateId } = await herald.templates.create({ name: 'Alert', category: 'defi', subjectTemplate: 'Health {{h}}', htmlSource: '<p>{{h}}</p>', textSource: '{{h}}' }, { idempotencyKey: 'alert-template-v1' });
   */
  async create(params: CreateTemplateParams, options?: CreateOptions): Promise<{ templateId: string }> {
    const { call, options: requestOptions } = createCall('/v1/templates/email', params, { templateId: 'string' }, options);
    return this.core.request(call, requestOptions);
  }

  /**
   * The protocol's templates, newest first.
   * @example const { data } = await herald.templates.list();
   */
  list(options?: RequestOptions): Promise<TemplateList> {
    return this.core.request({ method: 'GET', path: '/v1/templates/email', answer: { data: 'objects' } }, options);
  }

  /**
   * A template's current version and its version list; unknown ids throw 404 `TEMPLATE_NOT_FOUND`.
   * @example const { version, htmlSource } = await herald.templates.get('tmpl_01J…');
   */
  get(id: string, options?: RequestOptions): Promise<Template> {
    return this.core.request({ method: 'GET', path: templatePath(id), answer: TEMPLATE }, options);
  }

  /**
   * Stores a new version, which becomes current. Every update that reaches the gateway adds a
   * version, so one whose answer was lost is sent again only with `options.idempotencyKey`.
   * @example const { version } = await herald.templates.update('tmpl_01J…', { subjectTemplate: 'New: {{h}}' }, { idempotencyKey: 'alert-v2' });
   */
  async update(id: string, params: UpdateTemplateParams, options?: CreateOptions): Promise<Template> {
    const { call, options: requestOptions } = createCall(templatePath(id), params, TEMPLATE, options, 'PUT');
    return this.core.request(call, requestOptions);
  }

  /**
   * Deletes a template (204, resolves with nothing).
   * @example await herald.templates.delete('tmpl_01J…');
   */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.core.request({ method: 'DELETE', path: templatePath(id), noContent: true }, options);
  }

  /**
   * One stored version.
   * @example const v1 = await herald.templates.getVersion('tmpl_01J…', 1);
   */
  getVersion(id: string, version: number, options?: RequestOptions): Promise<TemplateVersion> {
    return this.core.request({ method: 'GET', path: versionPath(id, version), answer: { id: 'string', version: 'number' } }, options);
  }

  /**
   * Makes an old version current again, stored as a new version that copies it.
   * @example const { version } = await herald.templates.restoreVersion('tmpl_01J…', 1);
   */
  async restoreVersion(id: string, version: number, options?: CreateOptions): Promise<Template> {
    const { call, options: requestOptions } = createCall(`${versionPath(id, version)}/restore`, undefined, TEMPLATE, options);
    return this.core.request(call, requestOptions);
  }
}
