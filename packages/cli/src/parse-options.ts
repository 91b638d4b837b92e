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

/**
 * An empty value (`HERALD_BASE_URL=` in a script) counts as not given, as an empty HERALD_API_KEY
 * does: the setting then comes from the config file or the default. (Commander keeps '' for an
 * option whose parser answers undefined; contextFor reads that as not given.)
 */
export function unlessEmpty<T>(parse: (value: string) => T) {
  return (value: string): T | undefined => (value.trim() === '' ? undefined : parse(value));
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

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A duration as milliseconds: `500ms`, `30s`, `2m`, `1h`, or a bare number of seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('must be a duration such as 30s, 2m or 500ms (a bare number is seconds)');
  const ms = Math.round(Number(match[1]) * UNITS[match[2] ?? 's']);
  if (ms < 1 || ms > 86_400_000) throw new InvalidArgumentError('must be from 1ms to 24h');
  return ms;
}

/** A comma-separated list whose entries must all be among `allowed`. */
export function listOf(allowed: readonly string[]) {
  return (value: string): string[] => {
    const items = value.split(',').map((item) => item.trim()).filter(Boolean);
    const wrong = items.filter((item) => !allowed.includes(item));
    if (items.length === 0 || wrong.length > 0) throw new InvalidArgumentError(`must be a comma-separated list of: ${allowed.join(', ')}`);
    return [...new Set(items)];
  };
}
