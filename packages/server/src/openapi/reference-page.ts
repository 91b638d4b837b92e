import { createHash } from 'node:crypto';
import { REFERENCE_SCRIPT } from './reference-script.js';

const STYLE = `
  :root { --fg: #1d2430; --muted: #6b7483; --line: #e3e7ee; --bg: #ffffff; --side: #f6f8fb; --accent: #3557d4; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); display: flex; }
  code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
  a { color: var(--accent); text-decoration: none; }
  a:hover { text-decoration: underline; }
  aside { position: sticky; top: 0; height: 100vh; overflow-y: auto; width: 320px; flex: none; background: var(--side); border-right: 1px solid var(--line); padding: 16px; }
  aside input { width: 100%; padding: 7px 10px; border: 1px solid var(--line); border-radius: 6px; font: inherit; margin-bottom: 12px; }
  .nav-tag { font-weight: 600; text-transform: capitalize; margin: 14px 0 4px; }
  .nav-op { display: block; padding: 2px 0; color: var(--fg); font-size: 13px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  main { flex: 1; min-width: 0; padding: 24px 40px 80px; max-width: 1100px; }
  header h1 { margin: 0 0 8px; }
  h2 { text-transform: capitalize; border-bottom: 1px solid var(--line); padding-bottom: 6px; margin-top: 40px; }
  h3 { margin: 0 0 6px; font-size: 17px; }
  h4 { margin: 14px 0 6px; font-size: 14px; }
  .op { border: 1px solid var(--line); border-radius: 8px; padding: 16px 18px; margin: 16px 0; }
  .summary { margin: 0 0 8px; font-weight: 500; }
  .muted { color: var(--muted); font-weight: normal; }
  .method { display: inline-block; min-width: 56px; text-align: center; border-radius: 4px; padding: 1px 6px; font: 600 12px/1.6 ui-monospace, monospace; color: #fff; }
  .method.get { background: #2f855a; } .method.post { background: #2b6cb0; } .method.put { background: #b7791f; }
  .method.patch { background: #805ad5; } .method.delete { background: #c53030; }
  .badge { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; border: 1px solid var(--line); }
  .badge.public { background: #f0fff4; } .badge.auth { background: #fffaf0; }
  .req { color: #c53030; font-size: 11px; text-transform: uppercase; }
  table.props { border-collapse: collapse; width: 100%; margin: 4px 0; font-size: 14px; }
  table.props th, table.props td { text-align: left; vertical-align: top; border-top: 1px solid var(--line); padding: 5px 8px; }
  table.props th { color: var(--muted); font-weight: 500; font-size: 12px; }
  table.props table.props { margin-top: 6px; }
  .response { margin: 6px 0 10px; }
  .status { display: inline-block; min-width: 38px; font: 600 13px ui-monospace, monospace; }
  .status.ok { color: #2f855a; } .status.redirect { color: #b7791f; } .status.err { color: #c53030; }
  .error { color: #c53030; }
  @media (max-width: 800px) { body { display: block; } aside { position: static; width: auto; height: auto; } main { padding: 16px; } }
`;

/** The page downloads nothing: one inline style and one inline script, allowed by hash. */
export const REFERENCE_PAGE_CSP = [
  "default-src 'none'",
  `script-src 'sha256-${createHash('sha256').update(REFERENCE_SCRIPT).digest('base64')}'`,
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<style>${STYLE}</style>
</head>
<body>
<aside><input id="filter" type="search" placeholder="Filter endpoints…" aria-label="Filter endpoints"><nav id="nav"></nav></aside>
<main id="main"><p class="muted">Loading the OpenAPI document…</p></main>
<script>${REFERENCE_SCRIPT}</script>
</body>
</html>
`;
