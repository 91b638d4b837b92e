-- Webhook deliveries are claimed endpoint by endpoint (claimDue's grouped claim): each free
-- endpoint's oldest due deliveries, read from this index. The global due-order index it replaces
-- made a claim read every due delivery whenever most endpoints were busy.
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
DROP INDEX IF EXISTS webhook_deliveries_due;
