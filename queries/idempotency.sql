-- name: IdempotencyGet :one
SELECT * FROM idempotency_keys
WHERE clinic_id = @clinic_id AND principal = @principal AND route = @route AND key = @key
  AND created_at > now() - interval '24 hours';

-- name: IdempotencyInsert :exec
INSERT INTO idempotency_keys (clinic_id, principal, route, key, request_hash, status_code, body)
VALUES (@clinic_id, @principal, @route, @key, @request_hash, @status_code, @body);

-- name: IdempotencyDeleteExpired :execrows
DELETE FROM idempotency_keys WHERE created_at <= now() - interval '24 hours';
