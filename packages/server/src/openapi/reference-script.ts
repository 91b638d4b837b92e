/**
 * The browser side of GET /docs: fetches the OpenAPI document and renders it. Plain ES2017 in a
 * string (the page downloads nothing else); string concatenation only, no template literals, so it
 * can live inside this TypeScript string. It touches only `fetch`, `location` and a few `document`
 * calls, so tests run it outside a browser against the served document.
 */
export const REFERENCE_SCRIPT = String.raw`
(function () {
  'use strict';
  var METHODS = ['get', 'post', 'put', 'patch', 'delete'];

  function esc(value) {
    return String(value).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function slug(value) { return String(value).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''); }
  function refName(ref) { return ref.split('/').pop(); }

  function typeLabel(schema) {
    if (!schema || typeof schema !== 'object') return 'any';
    if (schema.$ref) return '<a href="#schema-' + slug(refName(schema.$ref)) + '">' + esc(refName(schema.$ref)) + '</a>';
    var variants = schema.anyOf || schema.oneOf;
    if (variants) return variants.map(typeLabel).join(' | ');
    if (schema.const !== undefined) return esc(JSON.stringify(schema.const));
    var type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type;
    if (type === 'array') return 'array of ' + typeLabel(schema.items);
    if (!type && schema.properties) type = 'object';
    return esc(type || 'any') + (schema.format ? ' <span class="muted">(' + esc(schema.format) + ')</span>' : '');
  }

  function constraints(schema) {
    var out = [];
    if (!schema || typeof schema !== 'object') return out;
    if (schema.enum) out.push('one of ' + schema.enum.map(function (v) { return '<code>' + esc(JSON.stringify(v)) + '</code>'; }).join(', '));
    var names = ['minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems', 'pattern'];
    names.forEach(function (name) { if (schema[name] !== undefined) out.push(esc(name) + ' <code>' + esc(schema[name]) + '</code>'); });
    if (schema['default'] !== undefined) out.push('default <code>' + esc(JSON.stringify(schema['default'])) + '</code>');
    return out;
  }

  function nestedOf(schema) {
    if (!schema || typeof schema !== 'object' || schema.$ref) return null;
    if (schema.properties || schema.additionalProperties) return schema;
    if (schema.type === 'array') return nestedOf(schema.items);
    var variants = schema.anyOf || schema.oneOf || [];
    for (var i = 0; i < variants.length; i++) { var found = nestedOf(variants[i]); if (found) return found; }
    return null;
  }

  function renderSchema(schema, depth) {
    if (!schema) return '';
    var object = nestedOf(schema);
    if (!object || depth > 6) {
      var notes = constraints(schema);
      return '<div class="schema">' + typeLabel(schema) + (notes.length ? ' <span class="muted">' + notes.join('; ') + '</span>' : '') + '</div>';
    }
    var required = object.required || [];
    var rows = Object.keys(object.properties || {}).map(function (name) {
      var prop = object.properties[name];
      var notes = constraints(prop);
      var child = nestedOf(prop) ? renderSchema(prop, depth + 1) : '';
      return '<tr><td><code>' + esc(name) + '</code>' + (required.indexOf(name) >= 0 ? ' <span class="req">required</span>' : '') + '</td>' +
        '<td>' + typeLabel(prop) + '</td><td>' + (prop.description ? esc(prop.description) : '') +
        (notes.length ? '<div class="muted">' + notes.join('; ') + '</div>' : '') + child + '</td></tr>';
    });
    if (object.additionalProperties && typeof object.additionalProperties === 'object') {
      rows.push('<tr><td><em>any key</em></td><td>' + typeLabel(object.additionalProperties) + '</td><td></td></tr>');
    }
    var head = schema.type === 'array' ? '<div class="muted">array of:</div>' : '';
    if (!rows.length) return head + '<div class="schema">object</div>';
    return head + '<table class="props"><thead><tr><th>Field</th><th>Type</th><th>Notes</th></tr></thead><tbody>' + rows.join('') + '</tbody></table>';
  }

  function jsonSchemaOf(content) {
    if (!content) return null;
    var media = content['application/json'] || content[Object.keys(content)[0]];
    return media ? media.schema : null;
  }

  function securityLabel(doc, op) {
    var security = op.security || doc.security || [];
    if (!security.length) return '<span class="badge public">no authentication</span>';
    return security.map(function (req) {
      return Object.keys(req).map(function (name) { return '<span class="badge auth">bearer: ' + esc(name) + '</span>'; }).join(' ');
    }).join(' or ');
  }

  function renderOperation(doc, item) {
    var op = item.op;
    var id = 'op-' + item.method + '-' + slug(item.path);
    var html = '<section class="op" id="' + id + '" data-search="' + esc((item.method + ' ' + item.path + ' ' + (op.summary || '') + ' ' + item.tag).toLowerCase()) + '">';
    html += '<h3><span class="method ' + item.method + '">' + item.method.toUpperCase() + '</span> <code class="path">' + esc(item.path) + '</code></h3>';
    if (op.summary) html += '<p class="summary">' + esc(op.summary) + '</p>';
    if (op.description) html += '<p>' + esc(op.description) + '</p>';
    html += '<p>' + securityLabel(doc, op) + '</p>';
    var params = op.parameters || [];
    if (params.length) {
      html += '<h4>Parameters</h4><table class="props"><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Notes</th></tr></thead><tbody>';
      params.forEach(function (p) {
        var notes = constraints(p.schema);
        html += '<tr><td><code>' + esc(p.name) + '</code>' + (p.required ? ' <span class="req">required</span>' : '') + '</td><td>' + esc(p['in']) + '</td><td>' +
          typeLabel(p.schema) + '</td><td>' + esc(p.description || (p.schema && p.schema.description) || '') + (notes.length ? '<div class="muted">' + notes.join('; ') + '</div>' : '') + '</td></tr>';
      });
      html += '</tbody></table>';
    }
    if (op.requestBody) {
      html += '<h4>Request body' + (op.requestBody.required ? ' <span class="req">required</span>' : '') + '</h4>' + renderSchema(jsonSchemaOf(op.requestBody.content), 0);
    }
    var responses = op.responses || {};
    html += '<h4>Responses</h4>';
    Object.keys(responses).forEach(function (status) {
      var response = responses[status];
      var kind = status.charAt(0) === '2' ? 'ok' : status.charAt(0) === '3' ? 'redirect' : 'err';
      html += '<div class="response"><span class="status ' + kind + '">' + esc(status) + '</span> ' + esc(response.description || '') + renderSchema(jsonSchemaOf(response.content), 0) + '</div>';
    });
    return html + '</section>';
  }

  function collect(doc) {
    var groups = {};
    var order = (doc.tags || []).map(function (t) { return t.name; });
    Object.keys(doc.paths || {}).forEach(function (path) {
      METHODS.forEach(function (method) {
        var op = doc.paths[path][method];
        if (!op) return;
        var tag = (op.tags && op.tags[0]) || 'other';
        if (!groups[tag]) { groups[tag] = []; if (order.indexOf(tag) < 0) order.push(tag); }
        groups[tag].push({ path: path, method: method, op: op, tag: tag });
      });
    });
    return order.filter(function (tag) { return groups[tag]; }).map(function (tag) { return { tag: tag, items: groups[tag] }; });
  }

  function renderReference(doc) {
    var groups = collect(doc);
    var info = doc.info || {};
    var nav = '';
    var main = '<header><h1>' + esc(info.title || 'API reference') + ' <span class="muted">' + esc(info.version || '') + '</span></h1>' +
      (info.description ? '<p>' + esc(info.description) + '</p>' : '') +
      '<p class="muted">OpenAPI ' + esc(doc.openapi || '') + ' · <a href="openapi.json">openapi.json</a></p></header>';
    groups.forEach(function (group) {
      nav += '<div class="nav-group" data-tag="' + esc(group.tag) + '"><div class="nav-tag">' + esc(group.tag) + '</div>';
      main += '<div class="tag-group" data-tag="' + esc(group.tag) + '"><h2 id="tag-' + slug(group.tag) + '">' + esc(group.tag) + '</h2>';
      group.items.forEach(function (item) {
        nav += '<a class="nav-op" data-search="' + esc((item.method + ' ' + item.path + ' ' + (item.op.summary || '') + ' ' + item.tag).toLowerCase()) +
          '" href="#op-' + item.method + '-' + slug(item.path) + '"><span class="method ' + item.method + '">' + item.method.toUpperCase() + '</span> ' + esc(item.path) + '</a>';
        main += renderOperation(doc, item);
      });
      nav += '</div>';
      main += '</div>';
    });
    var schemas = (doc.components && doc.components.schemas) || {};
    var names = Object.keys(schemas);
    if (names.length) {
      main += '<div class="tag-group" data-tag="schemas"><h2 id="schemas">Schemas</h2>';
      names.forEach(function (name) {
        main += '<section class="op" id="schema-' + slug(name) + '" data-search="schema ' + esc(name.toLowerCase()) + '"><h3>' + esc(name) + '</h3>' +
          (schemas[name].description ? '<p>' + esc(schemas[name].description) + '</p>' : '') + renderSchema(schemas[name], 0) + '</section>';
      });
      main += '</div>';
    }
    return { title: info.title || 'API reference', nav: nav, main: main };
  }

  function installFilter() {
    var input = document.getElementById('filter');
    if (!input || !document.querySelectorAll) return;
    input.addEventListener('input', function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var matches = function (el) { var text = el.getAttribute('data-search') || ''; return words.every(function (w) { return text.indexOf(w) >= 0; }); };
      ['.op', '.nav-op'].forEach(function (selector) {
        Array.prototype.forEach.call(document.querySelectorAll(selector), function (el) { el.hidden = !matches(el); });
      });
      Array.prototype.forEach.call(document.querySelectorAll('.tag-group, .nav-group'), function (group) {
        group.hidden = !group.querySelector('.op:not([hidden]), .nav-op:not([hidden])');
      });
    });
  }

  function show(doc) {
    var page = renderReference(doc);
    document.title = page.title + ' — API reference';
    document.getElementById('nav').innerHTML = page.nav;
    document.getElementById('main').innerHTML = page.main;
    installFilter();
    if (location.hash) { var target = document.getElementById(location.hash.slice(1)); if (target) target.scrollIntoView(); }
  }

  fetch('openapi.json', { headers: { accept: 'application/json' } })
    .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.json(); })
    .then(show)
    .catch(function (error) {
      document.getElementById('main').innerHTML = '<p class="error">Could not load openapi.json: ' + esc(error.message) + '</p>';
    });
})();
`;
