import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';

/** The Idempotency-Key header of the template calls that make something new: create, update, restore. */
describe('Idempotency-Key on template writes', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    rival = await gw.createProtocol({ tier: 3, name: 'Rival' });
  });
  after(() => gw.close());

  const count = async (sql: string, params: unknown[]) => (await gw.herald.deps.db.query<{ n: number }>(sql, params))[0].n;
  const templatesOf = (protocol: TestProtocol) => count('SELECT count(*)::int AS n FROM email_templates WHERE protocol_id = $1', [protocol.id]);
  const versionsOf = (id: string) => count('SELECT count(*)::int AS n FROM email_template_versions WHERE template_id = $1', [id]);
  const send = (method: string, path: string, body: unknown, key?: string, apiKey = acme.apiKey) =>
    call(gw.url, apiKey, method, path, body, key === undefined ? {} : { 'idempotency-key': key });

  const template = { name: 'Alert', category: 'defi', subjectTemplate: 'Health {{h}}', htmlSource: '<p>{{h}}</p>', textSource: '{{h}}' };

  it('creates once for a repeated key and body, answering the first answer again, marked replayed', async () => {
    const key = `tmpl-${randomUUID()}`;
    const before = await templatesOf(acme);
    const first = await send('POST', '/v1/templates/email', template, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), null);
    // Key order, unknown fields and a default sent do not make another payload.
    const again = await send('POST', '/v1/templates/email', { ...template, note: 'ignored', name: 'Alert', serviceFooter: 'full' }, key);
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(await templatesOf(acme), before + 1);

    const other = await send('POST', '/v1/templates/email', { ...template, name: 'Other' }, key);
    assert.equal(other.status, 409, JSON.stringify(other.body));
    assert.ok(isErrorBody(other.body));
    assert.equal(other.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
    assert.equal(await templatesOf(acme), before + 1);

    // Keys are the protocol's own.
    assert.equal((await send('POST', '/v1/templates/email', template, key, rival.apiKey)).status, 201);
    assert.equal(await templatesOf(rival), 1);
  });

  it('creates exactly one template for 10 concurrent requests with one key, all answered alike', async () => {
    const key = `tmpl-${randomUUID()}`;
    const before = await templatesOf(acme);
    const answers = await Promise.all(Array.from({ length: 10 }, () => send('POST', '/v1/templates/email', { ...template, name: 'Burst' }, key)));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(201),
    );
    assert.equal(new Set(answers.map((a) => a.body.templateId)).size, 1);
    assert.equal(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true').length, 9);
    assert.equal(await templatesOf(acme), before + 1);
  });

  it('stores one version for a repeated update or restore, and keeps apart the keys of two templates', async () => {
    const { templateId } = (await send('POST', '/v1/templates/email', template)).body;
    const key = `put-${randomUUID()}`;
    const first = await send('PUT', `/v1/templates/email/${templateId}`, { subjectTemplate: 'Now {{h}}' }, key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.version, 2);
    const again = await send('PUT', `/v1/templates/email/${templateId}`, { subjectTemplate: 'Now {{h}}' }, key);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(await versionsOf(templateId), 2);
    assert.equal((await send('PUT', `/v1/templates/email/${templateId}`, { subjectTemplate: 'Later {{h}}' }, key)).status, 409);

    // The same key on another template's update is another request.
    const { templateId: otherId } = (await send('POST', '/v1/templates/email', template)).body;
    assert.equal((await send('PUT', `/v1/templates/email/${otherId}`, { subjectTemplate: 'Now {{h}}' }, key)).status, 409);
    assert.equal(await versionsOf(otherId), 1);

    const restoreKey = `restore-${randomUUID()}`;
    const restored = await send('POST', `/v1/templates/email/${templateId}/versions/1/restore`, undefined, restoreKey);
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    const restoredAgain = await send('POST', `/v1/templates/email/${templateId}/versions/1/restore`, undefined, restoreKey);
    assert.equal(restoredAgain.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(restoredAgain.body, restored.body);
    assert.equal(await versionsOf(templateId), 3);
    assert.equal((await send('POST', `/v1/templates/email/${templateId}/versions/2/restore`, undefined, restoreKey)).status, 409);
  });

  it('keeps no key for a refused request, refuses a key in the body, and without a key every request creates', async () => {
    const key = `tmpl-${randomUUID()}`;
    const broken = await send('POST', '/v1/templates/email', { ...template, htmlSource: '<p>{{#if}}</p>' }, key);
    assert.equal(broken.status, 400, JSON.stringify(broken.body));
    assert.equal((await send('POST', '/v1/templates/email', template, key)).status, 201, 'the key was left unused');

    const inBody = await send('POST', '/v1/templates/email', { ...template, idempotencyKey: 'k' });
    assert.equal(inBody.status, 400);
    assert.match(inBody.body.message, /Idempotency-Key header/);
    const { templateId } = (await send('POST', '/v1/templates/email', template)).body;
    for (const [method, path] of [
      ['PUT', `/v1/templates/email/${templateId}`],
      ['POST', `/v1/templates/email/${templateId}/versions/1/restore`],
    ]) {
      const refused = await send(method, path, { name: 'Renamed', idempotencyKey: 'k' });
      assert.equal(refused.status, 400, `${method} ${path}`);
      assert.match(refused.body.message, /Idempotency-Key header/);
    }

    const before = await templatesOf(acme);
    await send('POST', '/v1/templates/email', template);
    await send('POST', '/v1/templates/email', template);
    assert.equal(await templatesOf(acme), before + 2);
    assert.equal((await send('POST', '/v1/templates/email', template, '')).status, 400, 'an empty key');
  });
});
