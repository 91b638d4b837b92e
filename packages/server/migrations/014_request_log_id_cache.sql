-- request_log.id only orders rows of the same millisecond. Each session now takes ids from its
-- sequence a thousand at a time instead of locking and logging the sequence for every row: ids
-- from different processes interleave out of order, which the tie-break does not mind.
ALTER SEQUENCE request_log_id_seq CACHE 1000;
