import { InvalidArgumentError } from 'commander';

/** Commander argument parsers; a bad value becomes a usage error (exit 2) naming the flag. */
export function integerIn(min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    const parsed = Number(value);
    if (parsed < min || parsed > max) throw new InvalidArgumentError(`must be from ${min} to ${max}`);
    return parsed;
  };
}

const TIER_NAMES = ['developer', 'growth', 'scale', 'enterprise'];

/** A tier as its number (0-3) or its name (developer, growth, scale, enterprise). */
export function parseTier(value: string): 0 | 1 | 2 | 3 {
  const trimmed = value.trim().toLowerCase();
  const index = /^[0-3]$/.test(trimmed) ? Number(trimmed) : TIER_NAMES.indexOf(trimmed);
  if (index < 0) throw new InvalidArgumentError('must be 0-3 or one of developer, growth, scale, enterprise');
  return index as 0 | 1 | 2 | 3;
}

/** An ISO 8601 date or timestamp, normalised to UTC. */
export function parseTimestamp(value: string): string {
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw new InvalidArgumentError('must be an ISO 8601 date or timestamp, e.g. 2027-01-01T00:00:00Z');
  return new Date(at).toISOString();
}
