/** A contact as stored: its plaintext (decrypted) and whether it has been verified. */
export interface StoredContact {
  value: string | null;
  verified: boolean;
}

export interface ContactPlan {
  /** The contact itself; undefined: leave it (value and verification) as it is. */
  value: string | null | undefined;
  verified: boolean;
  /** A replacement waiting for its code while the verified contact still serves; undefined: leave it, null: none. */
  replacement: string | null | undefined;
  /** Where a verification code goes, when one is sent. */
  sendCodeTo: string | undefined;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * What a registration does to one contact. Omitted (undefined) keeps it as it is; null removes it;
 * the same value, whatever its case, keeps its verification (and re-sends a code while it is
 * unverified) and withdraws a replacement in waiting; a new value replacing a verified one waits
 * for its code while the verified one keeps carrying messages; any other new value must be
 * verified before it carries any.
 */
export function planContact(stored: StoredContact, requested: string | null | undefined): ContactPlan {
  if (requested === undefined) return { value: undefined, verified: stored.verified, replacement: undefined, sendCodeTo: undefined };
  if (requested === null) return { value: null, verified: false, replacement: null, sendCodeTo: undefined };
  // The same contact written in another case (an address's) is the same contact: it keeps its
  // verification and takes the new spelling, as the hourly code limits already count it as one.
  if (stored.value !== null && same(requested, stored.value)) {
    return { value: requested, verified: stored.verified, replacement: null, sendCodeTo: stored.verified ? undefined : requested };
  }
  if (stored.value !== null && stored.verified) return { value: undefined, verified: true, replacement: requested, sendCodeTo: requested };
  return { value: requested, verified: false, replacement: null, sendCodeTo: requested };
}
