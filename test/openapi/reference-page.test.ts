/**
 * GET /docs: a self-contained page that renders /openapi.json. Its script is run here outside a
 * browser (a vm context with the few DOM calls it makes) against the document the gateway serves.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import vm from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { startGateway, waitFor, type TestGateway } from '../support/gateway.js';

interface RenderedPage {
  title: string;
  nav: string;
  main: string;
  requested: string[];
}

const slug = (value: string) => value.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

/** Runs the page's script with `fetch` answered by `answer`, until it has rendered. */
async function renderPage(script: string, answer: (url: string) => Promise<Response>): Promise<RenderedPage> {
  const elements = { nav: { innerHTML: '' }, main: { innerHTML: '' } };
  const requested: string[] = [];
  const document = {
    title: '',
    getElementById: (id: string) => (elements as Record<string, { innerHTML: string }>)[id] ?? null,
    querySelectorAll: () => [],
  };
  const fetch = (url: string) => {
    requested.push(url);
    return answer(url);
  };
  vm.runInNewContext(script, { document, fetch, location: { hash: '' } });
  await waitFor(async () => elements.main.innerHTML !== '', 5000, 5);
  return { title: document.title, nav: elements.nav.innerHTML, main: elements.main.innerHTML, requested };
}

describe('GET /docs', () => {
  let gateway: TestGateway;
  let html: string;
  let headers: Headers;
  let script: string;
  let doc: any;

  before(async () => {
    gateway = await startGateway();
    const res = await fetch(`${gateway.url}/docs`);
    assert.equal(res.status, 200);
    headers = res.headers;
    html = await res.text();
    script = /<script>([\s\S]*)<\/script>/.exec(html)?.[1] ?? '';
    doc = await (await fetch(`${gateway.url}/openapi.json`)).json();
  });

  after(() => gateway?.close());

  const served = () => renderPage(script, (url) => fetch(new URL(url, `${gateway.url}/docs`)));

  it('is a public HTML page that loads nothing from elsewhere', () => {
    assert.match(headers.get('content-type') ?? '', /^text\/html/);
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /https?:\/\//, 'no absolute URL: no CDN, nothing downloaded');
    assert.doesNotMatch(html, /<link|\ssrc=/, 'no external stylesheet or script');
    assert.ok(script.length > 1000);
  });

  it('allows exactly its own inline script through the Content-Security-Policy', () => {
    const csp = headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /connect-src 'self'/);
    const hash = createHash('sha256').update(script).digest('base64');
    assert.ok(csp.includes(`script-src 'sha256-${hash}'`), csp);
  });

  it('renders every operation of /openapi.json, grouped by tag, with a link in the side list', async () => {
    const page = await served();
    assert.deepEqual(page.requested, ['openapi.json']);
    assert.equal(page.title, 'Herald notification gateway — API reference');
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete'].filter((m) => item[m])) {
        const id = `op-${method}-${slug(path)}`;
        assert.ok(page.main.includes(`id="${id}"`), `${method} ${path} rendered`);
        assert.ok(page.nav.includes(`href="#${id}"`), `${method} ${path} listed`);
        assert.ok(page.main.includes(`<h2 id="tag-${slug(item[method].tags[0])}">`), `tag of ${method} ${path}`);
      }
    }
  });

  it('shows parameters, request and response schemas, authentication and the Error schema', async () => {
    const { main } = await served();
    const section = (id: string) => {
      const start = main.indexOf(`id="${id}"`);
      assert.ok(start >= 0, id);
      return main.slice(start, main.indexOf('</section>', start));
    };
    const notify = section('op-post-v1-notify');
    assert.match(notify, /Request body <span class="req">required<\/span>/);
    assert.match(notify, /<code>wallet<\/code> <span class="req">required<\/span>/);
    assert.match(notify, /one of <code>&quot;defi&quot;<\/code>/);
    assert.match(notify, /<span class="status ok">202<\/span>/);
    assert.match(notify, /<a href="#schema-error">Error<\/a>/);
    assert.match(notify, /bearer: apiKey/);
    const status = section('op-get-v1-notifications-id');
    assert.match(status, /<h4>Parameters<\/h4>[\s\S]*<code>id<\/code> <span class="req">required<\/span><\/td><td>path<\/td>/);
    assert.match(status, /<code>receipt_status<\/code>/);
    assert.match(section('op-get-health'), /no authentication/);
    assert.match(section('op-post-v1-admin-protocols'), /bearer: adminToken/);
    assert.match(section('schema-error'), /<code>statusCode<\/code>/);
  });

  it('escapes every text it renders', async () => {
    const hostile = {
      openapi: '3.1.0',
      info: { title: '<b>T</b>', version: '1' },
      paths: {
        '/x/<i>': {
          get: {
            tags: ['<svg>'],
            summary: '<img src=x onerror=alert(1)>',
            parameters: [{ name: '"><script>', in: 'query', schema: { type: 'string', enum: ['</td>'] } }],
            responses: { 200: { description: '<u>ok</u>', content: { 'application/json': { schema: { type: 'object', properties: { '<p onclick=1>': { type: 'string' } } } } } } },
          },
        },
      },
    };
    const page = await renderPage(script, async () => new Response(JSON.stringify(hostile)));
    const rendered = page.main + page.nav;
    for (const raw of ['<b>T', '<img', '<i>', '<svg', '"><script>', '<u>', '<p onclick', '"</td>"']) assert.ok(!rendered.includes(raw), raw);
    assert.ok(rendered.includes('&lt;img src=x onerror=alert(1)&gt;'));
    assert.ok(rendered.includes('&quot;&lt;/td&gt;&quot;'));
  });

  it('filters the operations by every word typed, hiding groups left empty', async () => {
    const element = (search: string) => ({ hidden: false, getAttribute: () => search });
    const ops = [element('post /v1/notify queue one notification notifications'), element('get /v1/webhooks list endpoints webhooks')];
    const navOps = [element('post /v1/notify queue one notification notifications'), element('get /v1/webhooks list endpoints webhooks')];
    const group = (children: { hidden: boolean }[]) => ({ hidden: false, querySelector: () => children.find((child) => !child.hidden) ?? null });
    const groups = [group([ops[0], navOps[0]]), group([ops[1], navOps[1]])];
    let onInput: (() => void) | undefined;
    const filter = { value: '', addEventListener: (event: string, handler: () => void) => event === 'input' && (onInput = handler) };
    const nodes: Record<string, unknown[]> = { '.op': ops, '.nav-op': navOps, '.tag-group, .nav-group': groups };
    const elements: Record<string, unknown> = { nav: { innerHTML: '' }, main: { innerHTML: '' }, filter };
    const document = { title: '', getElementById: (id: string) => elements[id] ?? null, querySelectorAll: (selector: string) => nodes[selector] ?? [] };
    vm.runInNewContext(script, { document, location: { hash: '' }, fetch: async () => new Response(JSON.stringify(doc)) });
    await waitFor(async () => onInput, 5000, 5);

    filter.value = 'NOTIFY  queue';
    onInput!();
    assert.deepEqual([...ops, ...navOps].map((el) => el.hidden), [false, true, false, true]);
    assert.deepEqual(groups.map((g) => g.hidden), [false, true]);
    filter.value = 'notify webhooks';
    onInput!();
    assert.deepEqual(groups.map((g) => g.hidden), [true, true]);
    filter.value = '';
    onInput!();
    assert.deepEqual([...ops, ...navOps, ...groups].map((el) => el.hidden), [false, false, false, false, false, false]);
  });

  it('says so when the document cannot be loaded', async () => {
    const page = await renderPage(script, async () => new Response('nope', { status: 503 }));
    assert.match(page.main, /<p class="error">Could not load openapi.json: HTTP 503<\/p>/);
  });
});
