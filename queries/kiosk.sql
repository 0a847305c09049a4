-- name: KioskTokenScreen :one
-- The language of the screen a valid token opens; no row for a token
-- that is unknown, revoked or another clinic's.
SELECT language FROM kiosk_tokens WHERE clinic_id = @clinic_id AND token_hash = @token_hash AND revoked_at IS NULL;

-- name: KioskTokenSetLanguage :execrows
UPDATE kiosk_tokens SET language = @language WHERE id = @id AND clinic_id = @clinic_id;
