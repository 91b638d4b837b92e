/** One media range of an Accept header: its type in lower case and its q-value (NaN when unreadable). */
export interface MediaRange {
  range: string;
  q: number;
}

/** The media ranges of an Accept header, in order (RFC 9110 §12.5.1); a range without q has q 1. */
export function mediaRanges(accept: string | undefined): MediaRange[] {
  return (accept ?? '').split(',').map((part) => {
    const [range, ...params] = part.split(';').map((piece) => piece.trim());
    const q = params.find((param) => /^q\s*=/i.test(param));
    return { range: range.toLowerCase(), q: q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim()) };
  });
}
