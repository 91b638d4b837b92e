import type { Token } from 'markdown-it';

/**
 * How a text-like output (plain text, Telegram HTML) spells each markdown construct. `text` and
 * `code` receive raw text and must escape it for their format; every `inner` argument is already
 * in the output format.
 */
export interface TextDialect {
  text(text: string): string;
  strong(inner: string): string;
  em(inner: string): string;
  strike(inner: string): string;
  code(text: string): string;
  /** `href` passed the parser's scheme check (http, https, mailto); `auto` when the text is the URL. */
  link(inner: string, href: string, auto: boolean): string;
  /** `src` is any accepted link URL: dialects decide which images they show. */
  image(alt: string, src: string): string;
  heading(inner: string): string;
  /** `depth` is 0 for an outermost quote. */
  blockquote(inner: string, depth: number): string;
  codeBlock(text: string): string;
  bullet: string;
  rule: string;
}

interface TokenNode {
  token: Token;
  children: TokenNode[];
}

/** Walks markdown-it tokens into one string: blocks split by blank lines, list items by line. */
export function renderMarkdownText(tokens: Token[], dialect: TextDialect): string {
  return renderBlocks(nestTokens(tokens), dialect, 0, '\n\n').trim();
}

/** markdown-it streams are flat with open/close pairs; a tree makes each construct one node. */
function nestTokens(tokens: Token[]): TokenNode[] {
  const root: TokenNode[] = [];
  const stack: TokenNode[][] = [root];
  for (const token of tokens) {
    const siblings = stack[stack.length - 1];
    if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
      continue;
    }
    const node: TokenNode = { token, children: [] };
    siblings.push(node);
    if (token.nesting === 1) stack.push(node.children);
  }
  return root;
}

function renderBlocks(nodes: TokenNode[], d: TextDialect, quoteDepth: number, separator: string): string {
  return nodes
    .map((node) => renderBlock(node, d, quoteDepth))
    .filter((block) => block !== '')
    .join(separator);
}

function renderBlock(node: TokenNode, d: TextDialect, quoteDepth: number): string {
  const token = node.token;
  switch (token.type) {
    case 'inline':
      return renderInline(nestTokens(token.children ?? []), d);
    case 'heading_open':
      return d.heading(renderBlocks(node.children, d, quoteDepth, ''));
    case 'blockquote_open':
      return d.blockquote(renderBlocks(node.children, d, quoteDepth + 1, '\n\n'), quoteDepth);
    case 'bullet_list_open':
    case 'ordered_list_open':
      return renderList(node, d, quoteDepth);
    case 'fence':
    case 'code_block':
      return d.codeBlock(token.content.replace(/\n$/, ''));
    case 'hr':
      return d.rule;
    case 'table_open':
      return renderTable(node, d);
    default:
      return renderBlocks(node.children, d, quoteDepth, '\n\n');
  }
}

function renderList(node: TokenNode, d: TextDialect, quoteDepth: number): string {
  const ordered = node.token.type === 'ordered_list_open';
  const start = Number(node.token.attrGet('start') ?? 1);
  return node.children
    .map((item, index) => {
      const marker = ordered ? `${start + index}. ` : d.bullet;
      const content = renderBlocks(item.children, d, quoteDepth, '\n');
      return marker + content.replace(/\n/g, `\n${' '.repeat(marker.length)}`);
    })
    .join('\n');
}

function renderTable(node: TokenNode, d: TextDialect): string {
  const rows = node.children.flatMap((section) => section.children);
  return rows
    .map((row) =>
      row.children
        .map((cell) => {
          const content = renderBlocks(cell.children, d, 0, ' ');
          return cell.token.type === 'th_open' && content ? d.strong(content) : content;
        })
        .join(' | '),
    )
    .join('\n');
}

function renderInline(nodes: TokenNode[], d: TextDialect): string {
  return nodes.map((node) => renderInlineNode(node, d)).join('');
}

function renderInlineNode(node: TokenNode, d: TextDialect): string {
  const token = node.token;
  switch (token.type) {
    case 'softbreak':
    case 'hardbreak':
      return '\n';
    case 'code_inline':
      return d.code(token.content);
    case 'strong_open':
      return d.strong(renderInline(node.children, d));
    case 'em_open':
      return d.em(renderInline(node.children, d));
    case 's_open':
      return d.strike(renderInline(node.children, d));
    case 'link_open': {
      const auto = token.markup === 'linkify' || token.markup === 'autolink';
      return d.link(renderInline(node.children, d), token.attrGet('href') ?? '', auto);
    }
    case 'image': {
      const alt = (token.children ?? []).map((child) => child.content).join('');
      return d.image(alt, token.attrGet('src') ?? '');
    }
    default:
      // text, text_special and anything a future markdown-it adds: shown as escaped text.
      return token.nesting === 0 ? d.text(token.content) : renderInline(node.children, d);
  }
}
