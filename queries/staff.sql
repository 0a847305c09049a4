-- name: StaffUserUpsert :one
INSERT INTO staff_users (clinic_id, email, name, password_hash, role)
VALUES (@clinic_id, @email, @name, @password_hash, @role)
ON CONFLICT (email) DO NOTHING
RETURNING *;

-- name: StaffUserGetByEmail :one
SELECT * FROM staff_users WHERE email = @email;

-- name: StaffUserGet :one
SELECT * FROM staff_users WHERE id = @id;

-- name: StaffUserListByClinic :many
SELECT * FROM staff_users WHERE clinic_id = @clinic_id ORDER BY email;

-- name: KioskTokenInsert :one
INSERT INTO kiosk_tokens (clinic_id, name, token_hash, language) VALUES (@clinic_id, @name, @token_hash, @language) RETURNING *;

-- name: KioskTokenListByClinic :many
SELECT * FROM kiosk_tokens WHERE clinic_id = @clinic_id ORDER BY created_at DESC;

-- name: KioskTokenValid :one
SELECT EXISTS (SELECT 1 FROM kiosk_tokens WHERE clinic_id = @clinic_id AND token_hash = @token_hash AND revoked_at IS NULL);

-- name: KioskTokenRevoke :execrows
UPDATE kiosk_tokens SET revoked_at = now() WHERE id = @id AND clinic_id = @clinic_id AND revoked_at IS NULL;

-- name: KioskTokenActiveCount :one
SELECT count(*) FROM kiosk_tokens WHERE clinic_id = @clinic_id AND revoked_at IS NULL;

-- name: StaffUserSetDisabled :one
UPDATE staff_users SET disabled_at = CASE WHEN @disabled::boolean THEN coalesce(disabled_at, now()) END
WHERE id = @id AND clinic_id = @clinic_id
RETURNING *;

-- name: StaffUserSetRole :one
UPDATE staff_users SET role = @role
WHERE id = @id AND clinic_id = @clinic_id
RETURNING *;

-- name: ServerSecretInsert :exec
INSERT INTO server_secrets (name, value) VALUES (@name, @value) ON CONFLICT (name) DO NOTHING;

-- name: ServerSecretGet :one
SELECT value FROM server_secrets WHERE name = @name;
