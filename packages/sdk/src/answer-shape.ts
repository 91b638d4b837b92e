/** What a member of an answer must be; `objects` is an array of objects (the items of a list). */
export type MemberKind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'objects';

/**
 * The least a call's 2xx answer must be for its result type to hold: an array of objects
 * (`'objects'`), or an object with the members named, of the kinds named. A call names the members
 * that mark the answer as the gateway's (its id, its status) and the arrays and objects its type
 * declares, which code iterates: JSON from something that is not the gateway (`{}`, `[1,2]`) is
 * then refused at once rather than met later as `undefined`. Only the top level is checked.
 */
export type AnswerShape = 'objects' | Readonly<Record<string, MemberKind>>;

/** A page of a list (`{data, total, page}`): its items and how many there are in all. */
export const PAGE: AnswerShape = { data: 'objects', total: 'number' };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const KINDS: Record<MemberKind, { holds: (value: unknown) => boolean; name: string }> = {
  string: { holds: (value) => typeof value === 'string', name: 'a string' },
  number: { holds: (value) => typeof value === 'number', name: 'a number' },
  boolean: { holds: (value) => typeof value === 'boolean', name: 'true or false' },
  object: { holds: isRecord, name: 'an object' },
  array: { holds: Array.isArray, name: 'an array' },
  objects: { holds: (value) => Array.isArray(value) && value.every(isRecord), name: 'an array of objects' },
};

/** What is wrong with `answer` for `shape`, in a few words; undefined when it fits. */
export function shapeProblem(answer: unknown, shape: AnswerShape): string | undefined {
  if (shape === 'objects') return KINDS.objects.holds(answer) ? undefined : `it is not ${KINDS.objects.name}`;
  if (!isRecord(answer)) return `it is not an object`;
  for (const [member, kind] of Object.entries(shape)) {
    if (!KINDS[kind].holds(answer[member])) return `"${member}" is ${answer[member] === undefined ? 'missing' : `not ${KINDS[kind].name}`}`;
  }
  return undefined;
}
