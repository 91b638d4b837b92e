-- A verification code that verified its contact is kept, marked used, until it expires or is
-- replaced: a retry of that verification (its answer lost on the way) gets the same answer again.
ALTER TABLE identity_codes ADD COLUMN used_at timestamptz;
