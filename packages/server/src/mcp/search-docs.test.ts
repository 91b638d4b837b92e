import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDocPage } from './parse-doc-page.js';
import { buildDocsSearch, MAX_QUERY_TERMS, queryTerms, searchTerm, snippetAround } from './search-docs.js';

const pages = [
  parseDocPage(
    'webhooks.md',
    '---\nslug: webhooks\ntitle: Webhooks\n---\n# Webhooks\n\nHerald posts signed events to your endpoints.\n\n## Verifying signatures\n\nCompute an HMAC of the raw body with the endpoint secret and compare it in constant time.\n',
  ),
  parseDocPage(
    'idempotency.md',
    '---\nslug: idempotency\ntitle: Idempotency\n---\n# Idempotency\n\nSend an idempotencyKey to make retries safe. Same key and same payload answers duplicate.\n',
  ),
  parseDocPage(
    'limits.md',
    '---\nslug: limits\ntitle: Limits and quotas\n---\n# Limits\n\n| tier | rps |\n|---|---|\n| 0 | 10 |\n\nRetries after a 429 should wait for Retry-After. Webhooks are not rate limited.\n',
  ),
];

describe('buildDocsSearch', () => {
  const search = buildDocsSearch(pages);

  it('ranks a page whose title matches above pages that only mention the word', () => {
    const hits = search('webhooks', 5);
    assert.deepEqual(
      hits.map((hit) => hit.slug),
      ['webhooks', 'limits'],
    );
    assert.ok(hits[0].score > hits[1].score);
  });

  it('answers each page once, with the fields of a hit', () => {
    const hits = search('signatures secret webhooks', 5);
    assert.equal(new Set(hits.map((hit) => hit.slug)).size, hits.length);
    for (const hit of hits) {
      assert.deepEqual(Object.keys(hit).sort(), ['score', 'slug', 'snippet', 'title']);
      assert.equal(typeof hit.score, 'number');
    }
    assert.equal(hits[0].title, 'Webhooks');
  });

  it('finds words by prefix and despite a typo', () => {
    assert.equal(search('idempot', 5)[0]?.slug, 'idempotency');
    assert.equal(search('signture', 5)[0]?.slug, 'webhooks');
    assert.equal(search('webhoks', 5)[0]?.slug, 'webhooks');
    // One edit from the singular, two from the plural the title uses: found all the same.
    assert.equal(search('webhok', 5)[0]?.slug, 'webhooks');
    assert.equal(search('WEBHOOK', 5)[0]?.slug, 'webhooks');
  });

  it('indexes and searches words without a plural s, but keeps ss', () => {
    assert.deepEqual(['Webhooks', 'receipts', 'status', 'address', 'has', 'API'].map(searchTerm), ['webhook', 'receipt', 'statu', 'address', 'has', 'api']);
  });

  it('matches one- and two-letter words whole, not as prefixes of most of the index', () => {
    assert.deepEqual(search('we', 5), []);
    assert.equal(search('web', 5)[0]?.slug, 'webhooks');
  });

  it('searches a repeated word once, and at most the first MAX_QUERY_TERMS distinct words', () => {
    assert.deepEqual(queryTerms('Webhooks webhook WEBHOOKS, a a a retries'), ['webhook', 'a', 'retrie']);
    assert.deepEqual(search('webhooks '.repeat(50), 5), search('webhooks', 5));
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`);
    assert.deepEqual(queryTerms(words.join(' ')), words.slice(0, MAX_QUERY_TERMS));
    assert.deepEqual(queryTerms(' -- '), []);
  });

  it('cuts the answer at maxResults', () => {
    assert.equal(search('retries webhooks idempotency', 1).length, 1);
    assert.equal(search('retries webhooks idempotency', 20).length, 3);
  });

  it('matches a word with a digit only whole: 429 finds 429, not 428 or 4290', () => {
    const codes = buildDocsSearch([
      parseDocPage('a.md', '---\nslug: a\ntitle: A\n---\n# A\n\nAnswers 428 when the precondition fails.\n'),
      parseDocPage('b.md', '---\nslug: b\ntitle: B\n---\n# B\n\nAnswers 429 when the rate limit is reached.\n'),
      parseDocPage('c.md', '---\nslug: c\ntitle: C\n---\n# C\n\nPort 4290 is free.\n'),
    ]);
    assert.deepEqual(codes('429', 5).map((hit) => hit.slug), ['b']);
  });

  it('scores a page by its best section and a quarter of each of its next three', () => {
    const page = (slug: string, sections: string[]) =>
      parseDocPage(`${slug}.md`, `---\nslug: ${slug}\ntitle: ${slug}\n---\n# ${slug}\n\n${sections.map((text, i) => `## Part ${i}\n\n${text}\n`).join('\n')}`);
    const cron = 'A cron expression has five fields and runs in the schedule time zone.';
    const other = 'A one-time send names its instant and the zone its wall clock is read in.';
    const hits = buildDocsSearch([page('once', [cron, other]), page('twice', [cron, cron]), page('many', Array(8).fill(cron))])('cron', 5);
    assert.deepEqual(hits.map((hit) => hit.slug), ['many', 'twice', 'once']);
    assert.ok(Math.abs(hits[1].score - hits[2].score * 1.25) < 0.01, `${hits[1].score} against ${hits[2].score}`);
    // Three other sections count, not seven.
    assert.ok(Math.abs(hits[0].score - hits[2].score * 1.75) < 0.01, `${hits[0].score} against ${hits[2].score}`);
  });

  it('weighs a page kept out of the context (context: false) a quarter', () => {
    const text = '# Bulk\n\nBulk sends carry up to 100 notifications.\n';
    const guide = buildDocsSearch([parseDocPage('guide.md', `---\nslug: guide\ntitle: Bulk\n---\n${text}`)])('bulk', 5)[0].score;
    const record = buildDocsSearch([parseDocPage('record.md', `---\nslug: record\ntitle: Bulk\ncontext: false\n---\n${text}`)])('bulk', 5)[0].score;
    assert.ok(Math.abs(record - guide / 4) < 0.01, `${record} against ${guide}`);
  });

  it('answers nothing for words no page has', () => {
    assert.deepEqual(search('zzqqxx', 5), []);
  });

  it('takes the snippet from the best section, around the match, without table rules', () => {
    const [hit] = search('constant time', 5);
    assert.equal(hit.slug, 'webhooks');
    assert.match(hit.snippet, /constant time/);
    const [limits] = search('tier', 5);
    assert.doesNotMatch(limits.snippet, /---|\|/);
  });
});

describe('snippetAround', () => {
  it('marks both cuts of a long text with an ellipsis and keeps the match', () => {
    const text = `${'alpha '.repeat(60)}needle ${'omega '.repeat(60)}`;
    const snippet = snippetAround(text, ['needle']);
    assert.ok(snippet.startsWith('…') && snippet.endsWith('…'));
    assert.match(snippet, /needle/);
    assert.ok(snippet.length <= 242);
  });

  it('starts at the beginning when the match is early or absent', () => {
    assert.equal(snippetAround('Short **text** here', ['nothing']), 'Short text here');
  });

  it('centres on the query as written when the text has it whole, not on the first of its words', () => {
    const text = `Import the helper from @herald/sdk/webhooks. ${'Filler words here. '.repeat(20)}Then read HERALD_WEBHOOK_SECRET from the environment.`;
    assert.ok(snippetAround(text, ['herald', 'webhook', 'secret'], 'HERALD_WEBHOOK_SECRET').includes('HERALD_WEBHOOK_SECRET'));
    assert.ok(!snippetAround(text, ['herald', 'webhook', 'secret']).includes('HERALD_WEBHOOK_SECRET'), 'by its words alone the first match wins');
  });

  it('drops link targets and keeps their text', () => {
    assert.equal(snippetAround('See [the quickstart](quickstart.md).', []), 'See the quickstart.');
  });

  it('keeps identifiers, angle brackets and code spans as written', () => {
    const text = 'Every request carries `x-service-signature: t=<unix seconds>,v1=<hex>` where the hex is\nHMAC-SHA256 over `"<t>.<raw body>"`, keyed with the whole `whsec_…` string.';
    assert.equal(
      snippetAround(text, ['signature']),
      'Every request carries `x-service-signature: t=<unix seconds>,v1=<hex>` where the hex is HMAC-SHA256 over `"<t>.<raw body>"`, keyed with the whole `whsec_…` string.',
    );
    assert.equal(snippetAround('Set HERALD_WEBHOOK_SECRET, or answer 401 INVALID_SIGNATURE; a > b.', []), 'Set HERALD_WEBHOOK_SECRET, or answer 401 INVALID_SIGNATURE; a > b.');
  });

  it('strips emphasis, table pipes and quote marks, but not what code spans and code blocks hold', () => {
    assert.equal(snippetAround('> **Never** _retry_ a `4xx` with __the same__ *body*.', []), 'Never retry a `4xx` with the same body.');
    assert.equal(snippetAround('| `flag\\|env` | `**raw**` |\n|---|---|\n| a \\| b | c |', []), '`flag|env` `**raw**` a | b c');
    assert.equal(snippetAround('Run:\n\n```sh\ncurl -s x | jq .items[0]._id # *all*\n```\n', []), 'Run: curl -s x | jq .items[0]._id # *all*');
  });
});
