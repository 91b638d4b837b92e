import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDocPage, splitSections } from './parse-doc-page.js';

describe('parseDocPage', () => {
  it('reads slug and title from the front matter and keeps the body after it', () => {
    const page = parseDocPage('whatever.md', '---\nslug: webhooks\ntitle: Webhooks and events\n---\n\n# Webhooks\n\nSigned events.\n');
    assert.equal(page.slug, 'webhooks');
    assert.equal(page.title, 'Webhooks and events');
    assert.equal(page.body, '# Webhooks\n\nSigned events.\n');
  });

  it('accepts CRLF line ends, quoted values and extra keys', () => {
    const page = parseDocPage('x.md', '---\r\nslug: "limits"\r\norder: 3\r\ntitle: \'Limits: and quotas\'\r\n---\r\nBody');
    assert.equal(page.slug, 'limits');
    assert.equal(page.title, 'Limits: and quotas');
    assert.equal(page.body, 'Body');
  });

  it('reads the front matter of a file saved with a byte order mark', () => {
    assert.equal(parseDocPage('x.md', '\uFEFF---\nslug: bom\ntitle: BOM\n---\nBody').slug, 'bom');
  });

  it('falls back to the file name and the first heading without front matter', () => {
    const page = parseDocPage('self-hosting.md', 'Intro line\n\n## Running it\n\nText');
    assert.equal(page.slug, 'self-hosting');
    assert.equal(page.title, 'Running it');
  });

  it('falls back to the slug when there is no heading either', () => {
    const page = parseDocPage('notes.md', 'just text');
    assert.equal(page.title, 'notes');
    assert.deepEqual(page.sections, [{ heading: 'notes', text: 'just text' }]);
  });

  it('treats a front matter block that never closes as body text', () => {
    const page = parseDocPage('open.md', '---\nslug: nope\n# Title\n');
    assert.equal(page.slug, 'open');
    assert.match(page.body, /slug: nope/);
  });
});

describe('splitSections', () => {
  it('splits at every heading level and leaves out sections with no text', () => {
    const sections = splitSections('# Title\n## First\none\n### Deeper\ntwo\n## Last ##\nthree', 'Page');
    assert.deepEqual(sections, [
      { heading: 'First', text: 'one' },
      { heading: 'Deeper', text: 'two' },
      { heading: 'Last', text: 'three' },
    ]);
  });

  it('keeps text before the first heading under the fallback heading', () => {
    assert.deepEqual(splitSections('lead\n# A\nx', 'Page'), [
      { heading: 'Page', text: 'lead' },
      { heading: 'A', text: 'x' },
    ]);
  });

  it('does not split at a # line inside a code fence', () => {
    const body = '## Shell\n```sh\n# a comment, not a heading\nnpm start\n```\n~~~\n```\n# still code\n~~~\n## Next\ntext';
    const sections = splitSections(body, 'Page');
    assert.deepEqual(
      sections.map((section) => section.heading),
      ['Shell', 'Next'],
    );
    assert.match(sections[0].text, /# a comment, not a heading/);
    assert.match(sections[0].text, /# still code/);
  });
});
