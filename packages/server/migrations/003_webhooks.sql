-- The webhook dispatcher claims only deliveries of endpoints with no delivery in flight (one
-- request at a time per endpoint, in event order). This index answers "is this endpoint busy?"
-- from its pending rows alone, without reading the endpoint's whole delivery history.
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_pending ON webhook_deliveries (endpoint_id, locked_until) WHERE status = 'pending';
