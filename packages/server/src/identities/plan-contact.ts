/** A contact as stored: its plaintext (decrypted) and whether it has been verified. */
export interface StoredContact {
  value: string | null;
  verified: boolean;
}

export interface ContactPlan {
  /** undefined: leave the stored columns alone. */
  value: string | null | undefined;
  verified: boolean;
  sendCode: boolean;
}

/**
 * What a registration does to one contact. Omitted (undefined) keeps it as it is; null removes it;
 * the same value, whatever its case, keeps its verification (and re-sends a code while it is
 * unverified); a new value must be verified again.
 */
export function planContact(stored: StoredContact, requested: string | null | undefined): ContactPlan {
  if (requested === undefined) return { value: undefined, verified: stored.verified, sendCode: false };
  if (requested === null) return { value: null, verified: false, sendCode: false };
  // The same contact written in another case (an address's) is the same contact: it keeps its
  // verification and takes the new spelling, as the hourly code limits already count it as one.
  if (stored.value !== null && requested.toLowerCase() === stored.value.toLowerCase()) return { value: requested, verified: stored.verified, sendCode: !stored.verified };
  return { value: requested, verified: false, sendCode: true };
}
