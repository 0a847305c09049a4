-- name: IdempotencyGet :one
SELECT * FROM idempotency_keys
WHERE clinic_id = @clinic_id AND principal = @principal AND route = @route AND key = @key
  AND created_at > now() - interval '24 hours';

-- name: IdempotencyInsert :execrows
-- Zero rows: a live record for the key exists (a concurrent request with
-- the same key committed first; this statement waited for it).
INSERT INTO idempotency_keys (clinic_id, principal, route, key, request_hash, status_code, body)
VALUES (@clinic_id, @principal, @route, @key, @request_hash, @status_code, @body)
ON CONFLICT (clinic_id, principal, route, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code, body = EXCLUDED.body, created_at = now()
WHERE idempotency_keys.created_at <= now() - interval '24 hours';

-- name: IdempotencyDeleteExpired :execrows
DELETE FROM idempotency_keys WHERE created_at <= now() - interval '24 hours';
