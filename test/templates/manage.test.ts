import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';

const BASE = '/v1/templates/email';

export const sampleTemplate = (overrides: Record<string, unknown> = {}) => ({
  name: 'Liquidation warning',
  category: 'defi',
  subjectTemplate: 'Health factor {{health}}',
  htmlSource: '<p>Hello {{name}},</p>\n<p>Your position is at {{health}}.</p>',
  textSource: 'Hello {{name}}, your position is at {{health}}.',
  serviceFooter: 'minimal',
  ...overrides,
});

describe('email templates: create, read, version, restore, delete', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    rival = await gw.createProtocol({ tier: 2, name: 'Rival' });
  });
  after(() => gw.close());

  const api = (method: string, path: string, body?: unknown, key = acme.apiKey) => call(gw.url, key, method, path, body);
  const create = async (overrides: Record<string, unknown> = {}, key = acme.apiKey) => {
    const res = await api('POST', BASE, sampleTemplate(overrides), key);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.templateId as string;
  };

  it('creates, lists and reads a template', async () => {
    const created = await api('POST', BASE, sampleTemplate());
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body), ['templateId']);
    const id = created.body.templateId;
    assert.match(id, /^tmpl_[0-9A-HJKMNP-TV-Z]{26}$/);

    const list = await api('GET', BASE);
    assert.equal(list.status, 200);
    const item = list.body.data.find((t: any) => t.id === id);
    assert.deepEqual(Object.keys(item).sort(), ['category', 'createdAt', 'id', 'name']);
    assert.equal(item.name, 'Liquidation warning');
    assert.equal(item.category, 'defi');

    const record = await api('GET', `${BASE}/${id}`);
    assert.equal(record.status, 200);
    const { createdAt, updatedAt, versions, ...rest } = record.body;
    assert.deepEqual(rest, { id, name: 'Liquidation warning', category: 'defi', version: 1, ...pick(sampleTemplate()) });
    assert.equal(createdAt, item.createdAt);
    assert.equal(updatedAt, createdAt);
    assert.deepEqual(versions, [{ version: 1, createdAt }]);
  });

  it('defaults serviceFooter to full and validates every field', async () => {
    const { serviceFooter: _omitted, ...withoutFooter } = sampleTemplate();
    const created = await api('POST', BASE, withoutFooter);
    assert.equal((await api('GET', `${BASE}/${created.body.templateId}`)).body.serviceFooter, 'full');

    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['bad footer', { serviceFooter: 'fancy' }, /^serviceFooter must be one of: full, minimal, none$/],
      ['bad category', { category: 'news' }, /^category must be one of/],
      ['empty html', { htmlSource: '' }, /^htmlSource/],
      ['unclosed placeholder on line 2', { htmlSource: '<p>Hi</p>\n<p>{{name</p>' }, /^htmlSource has a syntax error on line 2: /],
      ['mismatched block on line 3', { textSource: 'a\nb\n{{#if x}}y{{/each}}' }, /^textSource has a syntax error on line 3: if doesn't match each/],
      ['subject syntax', { subjectTemplate: 'Hi {{}}' }, /^subjectTemplate has a syntax error on line 1/],
      ['raw html output', { htmlSource: '<p>ok</p>\n\n{{{name}}}' }, /^htmlSource line 3: \{\{\{name\}\}\} would insert a value without HTML escaping/],
      ['partials', { htmlSource: '{{> header}}' }, /^htmlSource line 1: partials/],
      ['raw blocks', { htmlSource: '<p>{{{{raw}}}}{{name}}{{{{/raw}}}}</p>' }, /^htmlSource line 1: raw blocks/],
      ['unknown helper', { textSource: '{{uppercase name}}' }, /^textSource line 1: unknown helper "uppercase"/],
      ['blank subject', { subjectTemplate: '   ' }, /^subjectTemplate is blank: it must hold something to show/],
      ['blank text', { textSource: '\u200b \n' }, /^textSource is blank/],
      ['blank html', { htmlSource: ' ' }, /^htmlSource is blank/],
      ['blank name', { name: ' \u200b ' }, /^name must be a name that is not blank and holds no control or direction characters/],
      ['name with a control character', { name: 'a\u0001b' }, /^name must be a name that is not blank/],
      ['name with a right-to-left override', { name: 'Alert\u202e' }, /^name must be a name that is not blank/],
    ];
    for (const [label, overrides, message] of cases) {
      const res = await api('POST', BASE, sampleTemplate(overrides));
      assert.equal(res.status, 400, label);
      assert.ok(isErrorBody(res.body), label);
      assert.equal(res.body.code, 'VALIDATION_ERROR', label);
      assert.match(res.body.message, message, label);
    }
    // An update is held to the same rule.
    const renamed = await api('PUT', `${BASE}/${created.body.templateId}`, { name: 'a\u0001\u001fb' });
    assert.equal(renamed.status, 400);
    assert.match(renamed.body.message, /^name must be a name that is not blank/);
    const missing = await api('POST', BASE, { name: 'x', category: 'defi', htmlSource: 'h', textSource: 't' });
    assert.match(missing.body.message, /^subjectTemplate is required$/);
    // Raw output is fine in plain-text sources: nothing there is HTML.
    assert.equal((await api('POST', BASE, sampleTemplate({ textSource: '{{{name}}}' }))).status, 201);
  });

  it('PUT stores a new version, carrying unspecified fields over', async () => {
    const id = await create();
    const updated = await api('PUT', `${BASE}/${id}`, { htmlSource: '<h2>{{name}}</h2>', name: 'Renamed' });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.version, 2);
    assert.equal(updated.body.name, 'Renamed');
    assert.equal(updated.body.htmlSource, '<h2>{{name}}</h2>');
    assert.equal(updated.body.textSource, sampleTemplate().textSource);
    assert.equal(updated.body.subjectTemplate, sampleTemplate().subjectTemplate);
    assert.equal(updated.body.serviceFooter, 'minimal');
    assert.deepEqual(
      updated.body.versions.map((v: any) => v.version),
      [1, 2],
    );
    assert.ok(updated.body.updatedAt >= updated.body.createdAt);

    const second = await api('PUT', `${BASE}/${id}`, { serviceFooter: 'none' });
    assert.equal(second.body.version, 3);
    assert.equal(second.body.htmlSource, '<h2>{{name}}</h2>');
    assert.equal(second.body.serviceFooter, 'none');

    const v1 = await api('GET', `${BASE}/${id}/versions/1`);
    assert.equal(v1.status, 200);
    assert.equal(v1.body.current, false);
    assert.equal(v1.body.htmlSource, sampleTemplate().htmlSource);
    assert.equal((await api('GET', `${BASE}/${id}/versions/3`)).body.current, true);
    assert.equal((await api('GET', `${BASE}/${id}/versions/4`)).body.code, 'TEMPLATE_NOT_FOUND');

    for (const [body, message] of [
      [{}, /^body must have at least one of: name, category/],
      [{ htmlSource: 'a\n{{#each x}}' }, /^htmlSource has a syntax error on line 2/],
      [{ serviceFooter: 'loud' }, /^serviceFooter must be one of/],
    ] as const) {
      const bad = await api('PUT', `${BASE}/${id}`, body);
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, message);
    }
    assert.equal((await api('GET', `${BASE}/${id}`)).body.version, 3, 'refused updates store nothing');
  });

  it('answers each of concurrent PUTs and restores with the version that call made', async () => {
    const id = await create();
    const updates = Array.from({ length: 8 }, (_, i) => api('PUT', `${BASE}/${id}`, { subjectTemplate: `Subject ${i}` }));
    const restores = Array.from({ length: 2 }, () => api('POST', `${BASE}/${id}/versions/1/restore`));
    const answers = await Promise.all([...updates, ...restores]);
    answers.forEach((answer, i) => {
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.subjectTemplate, i < 8 ? `Subject ${i}` : sampleTemplate().subjectTemplate, `call ${i}`);
      assert.equal(answer.body.versions.at(-1).version, answer.body.version, 'its own version is the last it lists');
    });
    assert.deepEqual(
      answers.map((answer) => answer.body.version).sort((a, b) => a - b),
      [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
  });

  it('restores an old version as a new current version', async () => {
    const id = await create();
    await api('PUT', `${BASE}/${id}`, { subjectTemplate: 'v2 {{health}}' });
    const restored = await api('POST', `${BASE}/${id}/versions/1/restore`);
    assert.equal(restored.status, 200);
    assert.equal(restored.body.version, 3);
    assert.equal(restored.body.subjectTemplate, sampleTemplate().subjectTemplate);
    assert.deepEqual(
      restored.body.versions.map((v: any) => v.version),
      [1, 2, 3],
    );
    assert.equal((await api('GET', `${BASE}/${id}/versions/2`)).body.subjectTemplate, 'v2 {{health}}', 'history is kept');
    const unknown = await api('POST', `${BASE}/${id}/versions/9/restore`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'TEMPLATE_NOT_FOUND');
    assert.equal((await api('GET', `${BASE}/${id}`)).body.version, 3, 'a refused restore stores nothing');
    assert.equal((await api('POST', `${BASE}/${id}/versions/zero/restore`)).status, 400);
  });

  it('deletes with 204 and no body; the template is gone for every operation', async () => {
    const id = await create();
    const res = await fetch(`${gw.url}${BASE}/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${acme.apiKey}` } });
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assert.ok(!(await api('GET', BASE)).body.data.some((t: any) => t.id === id));
    for (const [method, path, body] of [
      ['GET', `${BASE}/${id}`],
      ['PUT', `${BASE}/${id}`, { name: 'x' }],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/versions/1/restore`],
    ] as const) {
      const gone = await api(method, path, body);
      assert.equal(gone.status, 404, `${method} ${path}`);
      assert.equal(gone.body.code, 'TEMPLATE_NOT_FOUND');
    }
  });

  it("answers 404 for another protocol's template and lists only the caller's", async () => {
    const id = await create();
    for (const [method, path, body] of [
      ['GET', `${BASE}/${id}`],
      ['GET', `${BASE}/${id}/versions/1`],
      ['PUT', `${BASE}/${id}`, { name: 'stolen' }],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/versions/1/restore`],
    ] as const) {
      const res = await api(method, path, body, rival.apiKey);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.code, 'TEMPLATE_NOT_FOUND');
    }
    assert.equal((await api('GET', BASE, undefined, rival.apiKey)).body.data.length, 0);
    const record = await api('GET', `${BASE}/${id}`);
    assert.equal(record.body.name, 'Liquidation warning');
    assert.equal(record.body.version, 1);
  });

  it('needs the Growth tier for every operation, before looking at the body', async () => {
    const growth = await gw.createProtocol({ tier: 1 });
    const id = await create({}, growth.apiKey);
    assert.equal((await api('GET', `${BASE}/${id}`, undefined, growth.apiKey)).status, 200);
    for (const [method, path, body] of [
      ['POST', BASE, sampleTemplate()],
      ['POST', BASE, { nonsense: true }],
      ['GET', BASE],
      ['GET', `${BASE}/${id}`],
      ['PUT', `${BASE}/${id}`, {}],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/versions/1/restore`],
    ] as const) {
      // A Developer protocol per request: its limit is 2 requests per second.
      const dev = await gw.createProtocol({ tier: 0 });
      const res = await api(method, path, body, dev.apiKey);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'TIER_REQUIRED');
    }
    // Not even read: a body that is not JSON gets the tier's answer, not a 400.
    const dev = await gw.createProtocol({ tier: 0 });
    const garbage = await fetch(`${gw.url}${BASE}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.apiKey}`, 'content-type': 'application/json' },
      body: 'garbage',
    });
    assert.equal(garbage.status, 403);
    assert.equal((await garbage.json()).code, 'TIER_REQUIRED');
    assert.equal((await call(gw.url, undefined, 'GET', BASE)).status, 401);
  });

  it('lets a sandbox key read and preview templates, not change them: live sends use them', async () => {
    const p = await gw.createProtocol({ tier: 1 });
    const id = await create({}, p.apiKey);
    for (const [method, path, body] of [
      ['POST', BASE, sampleTemplate()],
      ['POST', BASE, { nonsense: true }],
      ['PUT', `${BASE}/${id}`, { subjectTemplate: 'Phish' }],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/versions/1/restore`],
    ] as const) {
      const res = await api(method, path, body, p.sandboxApiKey);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.deepEqual([res.body.code, res.body.message], ['FORBIDDEN', 'Changing a template needs a live key (hrld_live_…): production sends use its current version']);
    }
    // An unknown or another protocol's id is a 404 first, as on every route that takes one.
    const theirs = await create({}, (await gw.createProtocol({ tier: 1 })).apiKey);
    for (const other of ['tmpl_missing', theirs]) {
      for (const [method, path] of [['PUT', `${BASE}/${other}`], ['DELETE', `${BASE}/${other}`], ['POST', `${BASE}/${other}/versions/1/restore`]] as const) {
        const res = await api(method, path, method === 'PUT' ? { name: 'x' } : undefined, p.sandboxApiKey);
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.equal(res.body.code, 'TEMPLATE_NOT_FOUND');
      }
    }
    const read = await api('GET', `${BASE}/${id}`, undefined, p.sandboxApiKey);
    assert.equal(read.status, 200);
    assert.equal(read.body.version, 1, 'unchanged');
    assert.equal((await api('GET', BASE, undefined, p.sandboxApiKey)).body.data.length, 1);
    assert.equal((await api('GET', `${BASE}/${id}/versions/1`, undefined, p.sandboxApiKey)).status, 200);
  });
});

function pick(t: ReturnType<typeof sampleTemplate>) {
  return { subjectTemplate: t.subjectTemplate, htmlSource: t.htmlSource, textSource: t.textSource, serviceFooter: t.serviceFooter };
}
