import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDeliveryWorker } from '../../packages/server/src/delivery/worker.js';
import { call, isErrorBody, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

const BASE = '/v1/templates/email';
const HOSTILE = `<script>alert("x")</script> & 'quotes' \`tick\` a=b`;

describe('sending with a template', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;
  let wallet: string;
  let templateId: string;

  // api role: nothing is delivered until a test starts a worker on the same database.
  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000', HERALD_WORKER_POLL_MS: '50' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    rival = await gw.createProtocol({ tier: 3, name: 'Rival' });
    wallet = await registeredWallet(gw.url, { email: 'reader@example.com', telegramChatId: '77', phone: '+15555550100' });
    const created = await call(gw.url, acme.apiKey, 'POST', BASE, {
      name: 'Alert',
      category: 'defi',
      subjectTemplate: 'Alert for {{name}}',
      htmlSource: [
        '<p class="greeting">Hi {{name}},</p>',
        '<p>Your <b>{{asset}}</b> position needs attention.</p>',
        '<a href="https://app.example.com/positions?id={{positionId}}&amp;src=mail">Open</a>',
        '<a href="{{link}}">Details</a>',
        '<a href="mailto:help@example.com">Help</a>',
      ].join('\n'),
      textSource: 'Hi {{name}}, your {{asset}} position needs attention: https://app.example.com/positions?id={{positionId}}',
      serviceFooter: 'minimal',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    templateId = created.body.templateId;
  });
  after(() => gw.close());

  const vars = (extra: Record<string, unknown> = {}) => ({ name: HOSTILE, asset: 'SOL', positionId: 'p<1>', link: 'javascript:alert(1)', ...extra });
  const send = (body: Record<string, unknown>, key = acme.apiKey) =>
    call(gw.url, key, 'POST', '/v1/notify', { wallet, subject: 'Fallback subject', body: 'Fallback body', category: 'defi', ...body }, {});

  it('previews a template: variables HTML-escaped in the HTML, raw in subject, text and SMS', async () => {
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/preview', {
      wallet,
      subject: 'ignored',
      body: 'ignored',
      category: 'defi',
      templateId,
      templateVariables: vars(),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { renderedHtml, telegramText, smsText, subject } = res.body;
    assert.ok(!renderedHtml.includes('<script>'), 'no live script tag');
    assert.match(renderedHtml, /<p class="greeting">Hi &lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#x27;quotes&#x27; &#x60;tick&#x60; a&#x3D;b,<\/p>/);
    assert.match(renderedHtml, /<b>SOL<\/b>/, "the template's own markup passes through");
    assert.match(renderedHtml, /href="https:\/\/app\.example\.com\/positions\?id=p&lt;1&gt;&amp;src=mail"/);
    assert.match(renderedHtml, /<a href="#">Details<\/a>/, 'a javascript: link supplied by a variable is neutralised');
    assert.match(renderedHtml, /href="mailto:help@example\.com"/);
    assert.match(renderedHtml, /<title>Alert for &lt;script&gt;/);
    assert.match(renderedHtml, /Unsubscribe from Acme/, 'minimal footer keeps the unsubscribe link');
    assert.ok(!renderedHtml.includes('Sent via Herald'), 'minimal footer has no "Sent via"');
    assert.ok(!renderedHtml.includes('Fallback'));

    assert.equal(subject, `Alert for ${HOSTILE}`);
    assert.equal(smsText, `Alert for ${HOSTILE}: Hi ${HOSTILE}, your SOL position needs attention: https://app.example.com/positions?id=p<1>`);
    assert.equal(
      telegramText,
      `<b>Alert for &lt;script&gt;alert("x")&lt;/script&gt; &amp; 'quotes' \`tick\` a=b</b>\n\n` +
        `Hi &lt;script&gt;alert("x")&lt;/script&gt; &amp; 'quotes' \`tick\` a=b, your SOL position needs attention: https://app.example.com/positions?id=p&lt;1&gt;`,
    );
  });

  it('refuses a send whose variables miss a placeholder, naming the variable', async () => {
    const single = await send({ templateId, templateVariables: { name: 'A', asset: 'SOL', link: 'https://x' } });
    assert.equal(single.status, 400);
    assert.ok(isErrorBody(single.body));
    assert.equal(single.body.code, 'VALIDATION_ERROR');
    assert.match(single.body.message, /^templateVariables has no value for "positionId", used by template tmpl_\w+ \(htmlSource, line 3\)$/);

    const none = await send({ templateId });
    assert.match(none.body.message, /^templateVariables has no value for "name", used by template .* \(subjectTemplate, line 1\)$/);

    const bulk = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {
      notifications: [
        { wallet, subject: 's', body: 'b', category: 'defi', templateId, templateVariables: vars() },
        { wallet, subject: 's', body: 'b', category: 'defi', templateId, templateVariables: { ...vars(), asset: undefined } },
      ],
    });
    assert.equal(bulk.status, 400);
    assert.match(bulk.body.message, /^notifications\[1\]\.templateVariables has no value for "asset"/);

    const [{ n }] = await gw.herald.deps.db.query('SELECT count(*)::int AS n FROM notifications WHERE template_id = $1', [templateId]);
    assert.equal(n, 0, 'nothing was stored');
  });

  it('refuses variables that render a blank subject or text, a subject too long for a header, or print an object; a missing parent in a condition is false', async () => {
    const created = await call(gw.url, acme.apiKey, 'POST', BASE, {
      name: 'Loose',
      category: 'defi',
      subjectTemplate: '{{s}}',
      htmlSource: '<p>{{#if promo.code}}Code {{promo.code}}{{else}}No promo{{/if}} {{t}}</p>',
      textSource: '{{#if promo.code}}Code {{promo.code}}{{else}}No promo{{/if}} {{t}}',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const loose = created.body.templateId;
    const textOnly = (await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Bare', category: 'defi', subjectTemplate: '{{s}}', htmlSource: '<p>{{t}}</p>', textSource: '{{t}}' })).body.templateId;
    const before = (await call(gw.url, acme.apiKey, 'GET', '/v1/usage')).body.usage;
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [loose, { s: ' \u200b', t: 'x' }, /^templateVariables does not fit template tmpl_\w+: subjectTemplate could not be rendered: the subject it renders with these variables is blank/],
      [textOnly, { s: 'S', t: '' }, /textSource could not be rendered: the text it renders with these variables is blank/],
      [loose, { s: 'S'.repeat(999), t: 'x' }, /the subject it renders with these variables is 999 characters; at most 998 fit an email header/],
      [loose, { s: 'S', t: { first: 'Ann' } }, /htmlSource could not be rendered: "t" is an object; a placeholder prints text, a number or true\/false/],
      [loose, { s: 'S', t: [1, 2] }, /"t" is a list/],
    ];
    for (const [id, templateVariables, message] of cases) {
      for (const path of ['/v1/notify', '/v1/preview']) {
        const res = await call(gw.url, acme.apiKey, 'POST', path, { wallet, subject: 's', body: 'b', category: 'defi', templateId: id, templateVariables });
        assert.equal(res.status, 400, `${path} ${JSON.stringify(templateVariables)}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'VALIDATION_ERROR');
        assert.match(res.body.message, message, path);
      }
    }
    assert.equal((await call(gw.url, acme.apiKey, 'GET', '/v1/usage')).body.usage, before, 'nothing was charged');

    // A condition whose parent is missing or null is simply false, as the docs say of a missing variable.
    for (const [promo, shown] of [[undefined, 'No promo x'], [null, 'No promo x'], [{ code: 'SAVE5' }, 'Code SAVE5 x']] as const) {
      const preview = await call(gw.url, acme.apiKey, 'POST', '/v1/preview', { wallet, subject: 's', body: 'b', category: 'defi', templateId: loose, templateVariables: { s: 'S', t: 'x', promo } });
      assert.equal(preview.status, 200, JSON.stringify(preview.body));
      assert.equal(preview.body.smsText, `S: ${shown}`);
      assert.equal((await send({ templateId: loose, templateVariables: { s: 'S', t: 'x', promo } })).status, 202);
    }
  });

  it('previews placeholders without a value as written, so a template previews before its values are known', async () => {
    const preview = (body: Record<string, unknown>) => call(gw.url, acme.apiKey, 'POST', '/v1/preview', { wallet, subject: 's', body: 'b', category: 'defi', ...body });
    const bare = await preview({ templateId });
    assert.equal(bare.status, 200, JSON.stringify(bare.body));
    assert.equal(bare.body.subject, 'Alert for {{name}}');
    assert.equal(bare.body.smsText, 'Alert for {{name}}: Hi {{name}}, your {{asset}} position needs attention: https://app.example.com/positions?id={{positionId}}');
    assert.match(bare.body.renderedHtml, /<p class="greeting">Hi \{\{name\}\},<\/p>/);
    const partial = await preview({ templateId, templateVariables: { name: 'Ana', asset: 'SOL' } });
    assert.equal(partial.status, 200);
    assert.equal(partial.body.smsText, 'Alert for Ana: Hi Ana, your SOL position needs attention: https://app.example.com/positions?id={{positionId}}');

    // thousands of placeholders are filled in one pass (one render each, not one per placeholder)
    const many = Array.from({ length: 3000 }, (_, i) => `{{v${i}}}`).join(' ');
    const wide = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Wide', category: 'defi', subjectTemplate: 'Wide {{v0}}', htmlSource: `<p>${many}</p>`, textSource: many });
    assert.equal(wide.status, 201, JSON.stringify(wide.body));
    const widePreview = await preview({ templateId: wide.body.templateId, templateVariables: { v1: 'one' } });
    assert.equal(widePreview.status, 200);
    assert.equal(widePreview.body.subject, 'Wide {{v0}}');
    assert.ok(widePreview.body.smsText.includes('{{v0}} one {{v2}}') && widePreview.body.smsText.length > 100);

    // a placeholder under a given value that is not an object cannot be shown: refused as a send refuses it
    const nested = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Nested', category: 'defi', subjectTemplate: 'Hi {{user.name}}', htmlSource: '<p>{{user.name}}</p>', textSource: '{{user.name}}' });
    assert.equal((await preview({ templateId: nested.body.templateId })).body.subject, 'Hi {{user.name}}');
    // a missing object named whole as well as through its fields shows as written too
    const both = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Both', category: 'defi', subjectTemplate: '{{user.name}} / {{user}}', htmlSource: '<p>{{user}}</p>', textSource: '{{user}} {{#if user}}yes{{/if}}' });
    const bothPreview = await preview({ templateId: both.body.templateId });
    assert.equal(bothPreview.status, 200, JSON.stringify(bothPreview.body));
    assert.equal(bothPreview.body.subject, '{{user.name}} / {{user}}');
    assert.match(bothPreview.body.renderedHtml, /<p>\{\{user\}\}<\/p>/);
    assert.equal(bothPreview.body.smsText, '{{user.name}} / {{user}}: {{user}} yes');
    // a variable named only as a condition is false when missing, in a preview as in a send
    const flagged = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Flag', category: 'defi', subjectTemplate: 'Sub{{#if flag}} FLAG{{/if}}', htmlSource: '<p>A{{#if flag}} ON{{/if}}{{#unless flag}} OFF{{/unless}}</p>', textSource: 'T{{#if flag}} ON{{/if}}' });
    const flagPreview = await preview({ templateId: flagged.body.templateId });
    assert.equal(flagPreview.body.subject, 'Sub');
    assert.match(flagPreview.body.renderedHtml, /<p>A OFF<\/p>/);
    assert.equal(flagPreview.body.smsText, 'Sub: T');
    assert.equal((await preview({ templateId: flagged.body.templateId, templateVariables: { flag: true } })).body.subject, 'Sub FLAG');
    // …also when the block prints it: a send without it takes {{else}} and never reaches {{promo}}, and the preview shows that.
    const promo = await call(gw.url, acme.apiKey, 'POST', BASE, {
      name: 'Promo',
      category: 'defi',
      subjectTemplate: 'Offer{{#if promo}}: {{promo}}{{/if}}',
      htmlSource: '{{#if promo}}<p>Promo: {{promo}}</p>{{else}}<p>No promo</p>{{/if}}',
      textSource: '{{#if promo}}P {{promo}}{{else}}none{{/if}} {{#if promo}}{{promo}}{{/if}}',
    });
    const promoPreview = await preview({ templateId: promo.body.templateId });
    assert.equal(promoPreview.status, 200, JSON.stringify(promoPreview.body));
    assert.equal(promoPreview.body.subject, 'Offer');
    assert.match(promoPreview.body.renderedHtml, /<p>No promo<\/p>/);
    assert.doesNotMatch(promoPreview.body.renderedHtml, /Promo:/);
    assert.equal(promoPreview.body.smsText, 'Offer: none');
    const looked = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Lookup', category: 'defi', subjectTemplate: 'Hi {{lookup user "first"}}', htmlSource: '<p>x</p>', textSource: 't' });
    assert.equal((await preview({ templateId: looked.body.templateId })).body.subject, 'Hi {{user.first}}');
    assert.equal((await preview({ templateId: looked.body.templateId, templateVariables: { user: { first: 'Ana' } } })).body.subject, 'Hi Ana');
    const keyed = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Keyed', category: 'defi', subjectTemplate: 'Price {{lookup prices symbol}}', htmlSource: '<p>x</p>', textSource: 't' });
    const keyedPreview = await preview({ templateId: keyed.body.templateId });
    assert.equal(keyedPreview.status, 200, JSON.stringify(keyedPreview.body));
    assert.equal((await preview({ templateId: keyed.body.templateId, templateVariables: { prices: { SOL: 150 }, symbol: 'SOL' } })).body.subject, 'Price 150');
    const guest = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Guest', category: 'defi', subjectTemplate: '{{#if user}}Hi {{user.name}}{{else}}Hi anon{{/if}}', htmlSource: '<p>x</p>', textSource: 't' });
    assert.equal((await preview({ templateId: guest.body.templateId })).body.subject, 'Hi anon');
    assert.equal((await preview({ templateId: guest.body.templateId, templateVariables: { user: { name: 'Ana' } } })).body.subject, 'Hi Ana');
    const promoSent = await send({ templateId: promo.body.templateId });
    assert.equal(promoSent.status, 202, JSON.stringify(promoSent.body));
    const withPromo = await preview({ templateId: promo.body.templateId, templateVariables: { promo: '10% off' } });
    assert.equal(withPromo.body.subject, 'Offer: 10% off');
    assert.equal(withPromo.body.smsText, 'Offer: 10% off: P 10% off 10% off');
    const given = await preview({ templateId: both.body.templateId, templateVariables: { user: { id: 1 } } });
    assert.equal(given.status, 400, 'an object given as a value is refused, as a send refuses it');
    assert.match(given.body.message, /"user" is an object; a placeholder prints text/);
    const refused = await preview({ templateId: nested.body.templateId, templateVariables: { user: 'Ana' } });
    assert.equal(refused.status, 400);
    assert.ok(isErrorBody(refused.body));
    assert.match(refused.body.message, /^templateVariables /);

    // A missing mustache-style section is refused by a send, so by the preview too: a placeholder would render it as given.
    for (const html of ['<p>Hi{{#promo}} PROMO{{/promo}}</p>', '<p>Hi{{^vip}} upgrade{{/vip}}</p>', '<p>{{#a}}x{{else}}y{{/a}}</p>', '<p>{{#a.b}}x{{/a.b}}</p>']) {
      const section = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Section', category: 'defi', subjectTemplate: 'S', htmlSource: html, textSource: 't' });
      assert.equal(section.status, 201, JSON.stringify(section.body));
      const [previewed, sent] = [await preview({ templateId: section.body.templateId }), await send({ templateId: section.body.templateId })];
      assert.deepEqual([previewed.status, sent.status], [400, 400], html);
      assert.equal(previewed.body.message, sent.body.message);
      assert.match(previewed.body.message, /^templateVariables has no value for "(promo|vip|a|a\.b)"/);
    }
    const sectionGiven = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Given', category: 'defi', subjectTemplate: 'S{{#promo}} {{code}}{{/promo}}', htmlSource: '<p>x</p>', textSource: 't' });
    assert.equal((await preview({ templateId: sectionGiven.body.templateId, templateVariables: { promo: { code: 'P1' } } })).body.subject, 'S P1');

    // Names that are also fields of every JavaScript object show as written too, and render when given.
    const odd = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'Odd', category: 'defi', subjectTemplate: 'Dear {{constructor}} / {{__proto__}} / {{toString}}', htmlSource: '<p>x</p>', textSource: 't' });
    assert.equal(odd.status, 201, JSON.stringify(odd.body));
    const oddPreview = await preview({ templateId: odd.body.templateId });
    assert.equal(oddPreview.status, 200, JSON.stringify(oddPreview.body));
    assert.equal(oddPreview.body.subject, 'Dear {{constructor}} / {{__proto__}} / {{toString}}');
    const oddGiven = await preview({ templateId: odd.body.templateId, templateVariables: JSON.parse('{"constructor":"a","__proto__":"b","toString":"c"}') });
    assert.equal(oddGiven.body.subject, 'Dear a / b / c');
  });

  it("answers 404 for an unknown, deleted or another protocol's template", async () => {
    const theirs = await call(gw.url, rival.apiKey, 'POST', BASE, { name: 'r', category: 'defi', subjectTemplate: 's', htmlSource: 'h', textSource: 't' });
    const other = await call(gw.url, acme.apiKey, 'POST', BASE, { name: 'gone', category: 'defi', subjectTemplate: 's', htmlSource: 'h', textSource: 't' });
    await call(gw.url, acme.apiKey, 'DELETE', `${BASE}/${other.body.templateId}`);
    for (const id of ['tmpl_nope', theirs.body.templateId, other.body.templateId]) {
      const res = await send({ templateId: id });
      assert.equal(res.status, 404, id);
      assert.equal(res.body.code, 'TEMPLATE_NOT_FOUND');
      assert.equal(res.body.message, `Template ${id} does not exist`);
    }
    // in bulk, the message names the first item that uses it
    const bulk = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {
      notifications: [
        { wallet, subject: 's', body: 'b', category: 'defi', templateId, templateVariables: vars() },
        { wallet, subject: 's', body: 'b', category: 'defi', templateId: 'tmpl_nope' },
        { wallet, subject: 's', body: 'b', category: 'defi', templateId: 'tmpl_nope' },
      ],
    });
    assert.equal(bulk.status, 404);
    assert.ok(isErrorBody(bulk.body));
    assert.equal(bulk.body.code, 'TEMPLATE_NOT_FOUND');
    assert.equal(bulk.body.message, 'Template tmpl_nope does not exist (notifications[1].templateId)');
  });

  it('fails at once, without retries, a stored notification whose variables its template cannot render', async () => {
    const sent = await send({ templateId, templateVariables: vars(), preferredChannel: 'telegram' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    // Variables stored before a rule that now refuses them: an object where a placeholder prints.
    await gw.herald.deps.db.query('UPDATE notifications SET template_variables = $2 WHERE id = $1', [sent.body.notificationId, JSON.stringify(vars({ asset: { symbol: 'SOL' } }))]);
    const worker = createDeliveryWorker(gw.herald.deps, { ...gw.herald.deps.config.delivery, idleMs: 50 });
    worker.start();
    try {
      const record = await waitFor(async () => {
        const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${sent.body.notificationId}`);
        return res.body.status === 'failed' ? res.body : undefined;
      });
      assert.equal(record.attempts.length, 1, 'no retry: it could never render');
      assert.match(record.attempts[0].error, /^the template could not be rendered: htmlSource could not be rendered: "asset" is an object/);
    } finally {
      await worker.stop();
    }
  });

  it('delivers with the version the notification recorded, even after the template changed', async () => {
    const email = await send({ templateId, templateVariables: vars(), preferredChannel: 'email' });
    const telegram = await send({ templateId, templateVariables: vars(), preferredChannel: 'telegram' });
    assert.equal(email.status, 202, JSON.stringify(email.body));
    await call(gw.url, acme.apiKey, 'PUT', `${BASE}/${templateId}`, { subjectTemplate: 'Version two {{name}}', htmlSource: '<p>v2</p>' });
    await call(gw.url, acme.apiKey, 'DELETE', `${BASE}/${templateId}`);

    const worker = createDeliveryWorker(gw.herald.deps, { ...gw.herald.deps.config.delivery, idleMs: 50 });
    worker.start();
    try {
      for (const id of [email.body.notificationId, telegram.body.notificationId]) {
        const record = await waitFor(async () => {
          const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`);
          return res.body.status === 'delivered' ? res.body : undefined;
        });
        assert.equal(record.template_id, templateId);
        assert.equal(record.template_version, 1);
      }
    } finally {
      await worker.stop();
    }
    const mail = (await call(gw.url, acme.apiKey, 'GET', '/v1/sandbox/messages?channel=email')).body.data[0];
    assert.equal(mail.notificationId, email.body.notificationId);
    assert.equal(mail.subject, `Alert for ${HOSTILE}`);
    assert.ok(!mail.html.includes('<script>'));
    assert.match(mail.html, /Hi &lt;script&gt;/);
    assert.ok(!mail.html.includes('<p>v2</p>'), 'rendered with version 1');
    assert.match(mail.html, /<img src="[^"]+\/track\/open\/[^"]+"/, 'open pixel');
    const tracked = mail.html.match(/href="([^"]+\/track\/click\/[^"]+)">Open<\/a>/);
    assert.ok(tracked, 'http links go through the click redirect');
    const go = await fetch(tracked[1].replace(/&amp;/g, '&').replace(/^https?:\/\/[^/]+/, gw.url), { redirect: 'manual' });
    // As a URL parser writes it: what a browser would have requested from the link itself.
    assert.equal(go.headers.get('location'), 'https://app.example.com/positions?id=p%3C1%3E&src=mail');
    assert.match(mail.text, /^Alert for <script>/);
    assert.match(mail.text, /Hi <script>alert\("x"\)<\/script>/);

    const tg = (await call(gw.url, acme.apiKey, 'GET', '/v1/sandbox/messages?channel=telegram')).body.data[0];
    assert.equal(tg.notificationId, telegram.body.notificationId);
    assert.match(tg.text, /^<b>Alert for &lt;script&gt;/);
    assert.match(tg.text, /your SOL position needs attention/);
  });
});
