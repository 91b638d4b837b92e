-- The send path's batched statement writes the notification rows first and reserves the quota
-- last (notifications/notification-store.ts), so the usage rows it locks are held only from the
-- reservation to the commit instead of for the whole insert, and two batches can write their rows
-- at the same time. When a reservation does not fit, this function fails the statement, which
-- undoes the rows; the batch is then run again reserving first.
CREATE OR REPLACE FUNCTION herald_refuse_unreserved(refused bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  IF refused > 0 THEN
    RAISE EXCEPTION 'a quota reservation did not fit' USING ERRCODE = 'HQ402';
  END IF;
  RETURN refused;
END
$$;
