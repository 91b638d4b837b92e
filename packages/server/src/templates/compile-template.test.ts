import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileTemplate, findTemplateProblem, MissingVariableError, placeholderPaths, TemplateRenderError } from './compile-template.js';
import { previewVariables } from './resolve-send-templates.js';

const sources = (html: string, text = 'text', subject = 'subject') => ({ subjectTemplate: subject, htmlSource: html, textSource: text });

function missing(run: () => unknown): MissingVariableError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof MissingVariableError, String(error));
    return error;
  }
  assert.fail('expected a MissingVariableError');
}

describe('findTemplateProblem', () => {
  it('accepts placeholders, dotted paths and the built-in helpers', () => {
    const ok = '{{name}} {{user.first}} {{#if vip}}VIP{{else}}-{{/if}} {{#each items}}{{this}}{{@index}}{{/each}} {{#with user}}{{first}}{{/with}} {{lookup map key}}';
    assert.equal(findTemplateProblem('htmlSource', ok), null);
    assert.equal(findTemplateProblem('textSource', '{{{raw}}} {{&raw}}'), null);
  });

  it('names the field and the line of a syntax error', () => {
    assert.match(findTemplateProblem('htmlSource', 'a\nb\n  <p>{{name</p>\nc')!, /^htmlSource has a syntax error on line 3: expecting .*, got 'INVALID' in "<p>\{\{name<\/p>"$/);
    assert.equal(findTemplateProblem('textSource', 'x\n{{#if a}}y{{/each}}'), "textSource has a syntax error on line 2: if doesn't match each");
    assert.match(findTemplateProblem('subjectTemplate', '{{#each items}}')!, /^subjectTemplate has a syntax error on line 1/);
  });

  it('refuses unescaped output in HTML, partials, decorators and unknown helpers', () => {
    assert.match(findTemplateProblem('htmlSource', 'x\n{{{body}}}')!, /^htmlSource line 2: \{\{\{body\}\}\} would insert a value without HTML escaping; write \{\{body\}\}$/);
    assert.equal(findTemplateProblem('htmlSource', '<p>{{& user.name}}</p>'), 'htmlSource line 1: {{&user.name}} would insert a value without HTML escaping; write {{user.name}}');
    assert.equal(findTemplateProblem('htmlSource', 'a {{~&x}}'), 'htmlSource line 1: {{&x}} would insert a value without HTML escaping; write {{x}}');
    assert.match(findTemplateProblem('htmlSource', '{{& body}}')!, /^htmlSource line 1: \{\{&body\}\}/);
    assert.match(findTemplateProblem('htmlSource', '{{> footer}}')!, /partials/);
    assert.match(findTemplateProblem('textSource', '{{#> layout}}x{{/layout}}')!, /partials/);
    assert.match(findTemplateProblem('textSource', '{{* deco}}')!, /decorators/);
    assert.equal(findTemplateProblem('textSource', 'a\n {{{{raw}}}}{{x}}{{{{/raw}}}}'), 'textSource line 2: raw blocks ({{{{raw}}}}…{{{{/raw}}}}) are not supported');
    assert.match(findTemplateProblem('htmlSource', '<p>x</p>\r{{{{raw}}}}{{{x}}}{{{{/raw}}}}')!, /^htmlSource line 2: raw blocks/);
    assert.match(findTemplateProblem('htmlSource', 'a\r\n\r{{~& x}}')!, /^htmlSource line 3: \{\{&x\}\}/);
    // A section of the same name is a block like any other.
    assert.equal(findTemplateProblem('textSource', '{{#raw}}{{x}}{{/raw}}'), null);
    assert.match(findTemplateProblem('textSource', '\n\n{{shout name}}')!, /^textSource line 3: unknown helper "shout"/);
    assert.match(findTemplateProblem('textSource', '{{#if (shout name)}}x{{/if}}')!, /unknown helper "shout"/);
    assert.match(findTemplateProblem('textSource', '{{name size=2}}')!, /unknown helper "name"/);
    assert.equal(findTemplateProblem('textSource', '{{#with a b}}x{{/with}}'), 'textSource line 1: with takes one argument');
    assert.equal(findTemplateProblem('textSource', '{{lookup map}}'), 'textSource line 1: lookup takes 2 arguments');
    // a block named after a registered helper calls it, arguments or not
    for (const name of ['heraldPrint', 'log', 'helperMissing', 'blockHelperMissing']) {
      assert.match(findTemplateProblem('htmlSource', `{{#${name}}}x{{/${name}}}`)!, new RegExp(`unknown helper "${name}"`), name);
    }
    assert.equal(findTemplateProblem('htmlSource', '{{#section}}x{{/section}} {{log}}'), null, 'a section over a variable, and a variable named log');
  });
});

describe('compileTemplate', () => {
  it('escapes every value in HTML and none in subject and text', () => {
    const hostile = `<img src=x onerror="alert(1)"> & ' \` =`;
    const out = compileTemplate(sources('<p>{{v}}</p>', 'T {{v}}', 'S {{v}}')).render({ v: hostile });
    assert.equal(out.html, '<p>&lt;img src&#x3D;x onerror&#x3D;&quot;alert(1)&quot;&gt; &amp; &#x27; &#x60; &#x3D;</p>');
    assert.equal(out.text, `T ${hostile}`);
    assert.equal(out.subject, `S ${hostile}`);
  });

  it('names a missing variable with its full path, field and line', () => {
    const t = compileTemplate(sources('<p>\n{{user.first}}\n</p>', 'Hi {{name}}', 'x'));
    const a = missing(() => t.render({ name: 'n', user: {} }));
    assert.deepEqual([a.field, a.variable, a.line], ['htmlSource', 'user.first', 2]);
    const b = missing(() => t.render({ user: { first: 'f' } }));
    assert.deepEqual([b.field, b.variable, b.line], ['textSource', 'name', 1]);
    const c = missing(() => compileTemplate(sources('{{#each items}}{{this.n}}{{/each}}')).render({ items: [{ n: 1 }, {}] }));
    assert.equal(c.variable, 'n');
  });

  it('treats falsy and missing values in conditions as false, but present ones as given', () => {
    const t = compileTemplate(sources('{{#if vip}}VIP {{/if}}{{count}}'));
    assert.equal(t.render({ count: 0 }).html, '0');
    assert.equal(t.render({ vip: true, count: '' }).html, 'VIP ');
  });

  it('never reads prototype properties', () => {
    assert.equal(missing(() => compileTemplate(sources('{{#with o}}[{{constructor.name}}]{{/with}}')).render({ o: {} })).variable, 'constructor.name');
    assert.equal(missing(() => compileTemplate(sources('[{{o.__proto__}}]')).render({ o: {} })).variable, 'o.__proto__');
    assert.equal(missing(() => compileTemplate(sources('[{{lookup o "constructor"}}]')).render({ o: {} })).variable, 'o.constructor');
  });

  it('reads a condition or context whose parent is missing or null as false, never as an error', () => {
    const promo = compileTemplate(sources('{{#if promo.code}}Code {{promo.code}}{{else}}No promo{{/if}}'));
    assert.equal(promo.render({}).html, 'No promo');
    assert.equal(promo.render({ promo: null }).html, 'No promo');
    assert.equal(promo.render({ promo: {} }).html, 'No promo');
    assert.equal(promo.render({ promo: { code: 'X1' } }).html, 'Code X1');
    assert.equal(compileTemplate(sources('{{#unless a.b.c}}none{{/unless}}')).render({}).html, 'none');
    assert.equal(compileTemplate(sources('[{{#each a.list}}x{{/each}}]')).render({ a: 'text' }).html, '[]');
    assert.equal(compileTemplate(sources('[{{#with a.b}}{{c}}{{/with}}]')).render({}).html, '[]');
    assert.equal(compileTemplate(sources('{{#if (lookup user "vip")}}VIP{{else}}-{{/if}}')).render({}).html, '-');
    assert.equal(compileTemplate(sources('{{#each rows}}{{#if ../user.vip}}*{{/if}}{{this}}{{/each}}')).render({ rows: ['a', 'b'] }).html, 'ab');
  });

  it("keeps this.x and ./x the context's field where a block names its parameters (as |…|)", () => {
    const orders = compileTemplate(sources('{{#each orders as |order id|}}[{{this.id}}|{{./id}}|{{id}}|{{#if this.id}}y{{/if}}]{{/each}}'));
    assert.equal(orders.render({ orders: [{ id: 'A-17' }] }).html, '[A-17|A-17|0|y]');
    assert.equal(compileTemplate(sources('{{#each items as |item|}}{{this.item}}/{{item.first}}{{/each}}')).render({ items: [{ item: 'ctx', first: 'x' }] }).html, 'ctx/x');
  });

  it('reads @root paths like any other: false as a condition when missing, named when printed', () => {
    const t = compileTemplate(sources('{{#each rows}}{{#if @root.user.vip}}*{{/if}}{{this}}{{/each}}|{{@root.title}}'));
    assert.equal(t.render({ rows: ['a'], title: 'T' }).html, 'a|T');
    assert.equal(t.render({ rows: ['a'], title: 'T', user: { vip: true } }).html, '*a|T');
    assert.equal(missing(() => t.render({ rows: [] })).variable, 'title');
    // A preview shows it as the variable it is.
    const version = { ...sources('Hi {{@root.name}}'), templateId: 'tmpl_root', version: 1, serviceFooter: {} as never };
    assert.deepEqual(previewVariables(version), { name: '{{name}}' });
    assert.equal(compileTemplate(sources('{{#each r}}{{@index}}:{{@first}} {{/each}}')).render({ r: ['x', 'y'] }).html, '0:true 1:false ');
  });

  it('refuses templates nested too deeply to render, naming why, at create', () => {
    const deepLookups = `{{#if ${'(lookup '.repeat(2500)}a${' "b")'.repeat(2500)}}}y{{/if}}`;
    assert.equal(findTemplateProblem('htmlSource', deepLookups), 'htmlSource nests blocks or sub-expressions more than 50 deep');
    const deepBlocks = `${'{{#if a}}'.repeat(3000)}x${'{{/if}}'.repeat(3000)}`;
    assert.equal(findTemplateProblem('textSource', deepBlocks), 'textSource nests blocks or sub-expressions more than 50 deep');
    assert.equal(findTemplateProblem('textSource', `${'{{#if a}}'.repeat(50)}x${'{{/if}}'.repeat(50)}`), null);
    assert.equal(findTemplateProblem('textSource', `{{#if ${Array(60).fill('a').join('.')}}}x{{/if}}`), 'textSource line 1: a path of more than 50 segments');
  });

  it('reads data paths and ../ paths like others, and says plainly when one reaches nothing', () => {
    assert.throws(() => compileTemplate(sources('R={{@root}}')).render({ a: 1 }), (error) => error instanceof TemplateRenderError && /"@root" is an object/.test(error.message));
    assert.equal(compileTemplate(sources('{{#if @foo.bar}}Y{{else}}N{{/if}}')).render({}).html, 'N');
    // No variable fills a data name Handlebars does not set: it is not reported as a missing variable.
    for (const [source, name] of [['{{@foo}}', '@foo'], ['x\n{{@index}}', '@index'], ['{{@foo.bar}}', '@foo.bar']]) {
      assert.throws(
        () => compileTemplate(sources(source)).render({ foo: 'F', '@foo': 'F', index: 1 }),
        (error) => error instanceof TemplateRenderError && error.message.includes(`"${name}" is not an @ name Handlebars sets there (@root anywhere; @index, @key, @first and @last inside {{#each}})`),
      );
    }
    assert.throws(
      () => compileTemplate(sources('{{../x}}')).render({ x: 1 }),
      (error) => error instanceof TemplateRenderError && /"x" is read from nothing: a \.\.\/ path climbs above the variables/.test(error.message),
    );
  });

  it('names the key a lookup looked for, when the key is a variable', () => {
    const t = compileTemplate(sources('{{lookup prices symbol}}'));
    assert.equal(t.render({ prices: { SOL: 150 }, symbol: 'SOL' }).html, '150');
    assert.equal(missing(() => t.render({ prices: {}, symbol: 'zz' })).variable, 'prices.zz');
    assert.equal(missing(() => t.render({ prices: { SOL: 1 } })).variable, 'symbol', 'the key variable itself is what is missing');
    assert.equal(missing(() => compileTemplate(sources('{{lookup a \'x"y\'}}')).render({ a: {} })).variable, 'a.x"y');
  });

  it('names a printed path whose parent is missing or null, and a lookup that finds nothing, as missing', () => {
    const city = compileTemplate(sources('<p>\n{{user.address.city}}</p>'));
    for (const variables of [{}, { user: null }, { user: {} }, { user: { address: null } }]) {
      const error = missing(() => city.render(variables));
      assert.deepEqual([error.field, error.variable, error.line], ['htmlSource', 'user.address.city', 2], JSON.stringify(variables));
    }
    assert.equal(city.render({ user: { address: { city: 'Lyon' } } }).html, '<p>\nLyon</p>');
    const first = compileTemplate(sources('Hi {{lookup user "first"}}'));
    assert.equal(missing(() => first.render({})).variable, 'user.first');
    assert.equal(missing(() => first.render({ user: {} })).variable, 'user.first');
    assert.equal(first.render({ user: { first: 'Ann' } }).html, 'Hi Ann');
    assert.equal(compileTemplate(sources('{{#each items}}{{lookup ../labels @index}} {{/each}}')).render({ items: [1, 2], labels: ['a', 'b'] }).html, 'a b ');
    assert.equal(missing(() => compileTemplate(sources('{{#each items}}{{../title}}{{/each}}')).render({ items: [1] })).variable, 'title');
  });

  it('refuses to print an object or a list, which would show as "[object Object]" or "1,2"', () => {
    for (const [source, variables, what] of [
      ['Hi {{name}}', { name: { first: 'Ann' } }, /"name" is an object/],
      ['Hi {{name}}', { name: [1, 2] }, /"name" is a list/],
      ['{{user.tags}}', { user: { tags: ['a'] } }, /"user\.tags" is a list/],
      ['{{#each rows}}{{this}}{{/each}}', { rows: [{ a: 1 }] }, /"this" is an object/],
      ['{{lookup user "profile"}}', { user: { profile: {} } }, /"user\.profile" is an object/],
    ] as const) {
      assert.throws(
        () => compileTemplate(sources('x', source)).render(variables as Record<string, unknown>),
        (error) => error instanceof TemplateRenderError && what.test(error.message) && /a placeholder prints text, a number or true\/false/.test(error.message),
        source,
      );
    }
    // null prints nothing, as before; numbers and booleans print as written
    assert.equal(compileTemplate(sources('[{{a}}|{{b}}|{{c}}|{{d.e}}]')).render({ a: null, b: 0, c: false, d: { e: 1.5 } }).html, '[|0|false|1.5]');
  });

  it('reports other render failures as TemplateRenderError', () => {
    // findTemplateProblem refuses this at create time; compileTemplate alone does not check.
    assert.throws(
      () => compileTemplate(sources('{{#with a b}}x{{/with}}')).render({ a: 1, b: 2 }),
      (error) => error instanceof TemplateRenderError && /^htmlSource could not be rendered: #with requires exactly one argument/.test(error.message),
    );
    // a field looked up on a string: said in the template's terms, not JavaScript's
    assert.throws(
      () => compileTemplate(sources('{{user.name}}')).render({ user: 'bob' }),
      (error) => error instanceof TemplateRenderError && error.message === 'htmlSource could not be rendered: "name" cannot be read from the value "bob", which is not an object',
    );
  });

  it('reuses the compiled form under its cache key', () => {
    const first = compileTemplate(sources('{{a}}'), 'tmpl_cache@1');
    assert.equal(compileTemplate(sources('ignored'), 'tmpl_cache@1'), first);
    assert.equal(first.render({ a: 1 }).html, '1');
  });
});

describe('placeholderPaths', () => {
  it('names every variable path once, without helpers, @data or parent paths', () => {
    const paths = placeholderPaths({
      subjectTemplate: 'Hi {{name}}',
      htmlSource: '{{#each items}}{{@index}} {{title}} {{../name}}{{/each}}{{#if user.vip}}{{user.name}}{{/if}}',
      textSource: '{{name}} {{lookup items 0}} {{lookup profile "city"}}',
    });
    // items is a block's context (a preview finds it by rendering where lookup needs it); user.vip only a condition
    assert.deepEqual(paths.sort(), ['name', 'profile.city', 'title', 'user.name']);
    // a lookup inside a condition reads its object as a condition does
    assert.deepEqual(placeholderPaths(sources('{{#if (lookup user "vip")}}VIP{{else}}regular{{/if}}', '{{#with (lookup user "profile")}}{{city}}{{/with}}')), ['city']);
  });

  it("leaves out paths named as a block's condition or context, which a send reads as false when missing, even where the block prints them", () => {
    const paths = placeholderPaths({
      subjectTemplate: '{{#if flag}}On{{else}}Off{{/if}}',
      htmlSource: '{{#unless quiet}}{{greeting}}{{/unless}}{{#each rows}}x{{/each}}{{#with user}}{{name}}{{/with}}',
      textSource: '{{#if shown}}{{shown}}{{/if}} {{#if promo}}{{promo}}{{else}}none{{/if}} {{#if user}}Hi {{user.name}}{{else}}anon{{/if}} {{userName}}',
    });
    assert.deepEqual(paths.sort(), ['greeting', 'name', 'userName']);
  });
});
