-- name: StaffUserSignedIn :one
-- A signed-in account as each staff request loads it: the account, its
-- clinic's choice to require a second factor, whether it has one, and
-- whether the session (by its token's hash) was ended.
SELECT u.id, u.clinic_id, u.email, u.name, u.role, u.disabled_at,
       c.require_second_factor,
       EXISTS (SELECT 1 FROM staff_second_factors f
               WHERE f.staff_user_id = u.id AND f.confirmed_at IS NOT NULL)::boolean AS has_second_factor,
       EXISTS (SELECT 1 FROM staff_sessions s
               WHERE s.token_hash = @token_hash AND s.ended_at IS NOT NULL)::boolean AS session_ended
FROM staff_users u JOIN clinics c ON c.id = u.clinic_id
WHERE u.id = @id;

-- name: SecondFactorGet :one
SELECT * FROM staff_second_factors WHERE staff_user_id = @staff_user_id;

-- name: SecondFactorStart :one
-- A new secret to set up; an account whose second factor is on keeps it
-- (no row).
INSERT INTO staff_second_factors (staff_user_id, secret_sealed)
VALUES (@staff_user_id, @secret_sealed)
ON CONFLICT (staff_user_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed, last_step = 0, created_at = now()
WHERE staff_second_factors.confirmed_at IS NULL
RETURNING *;

-- name: SecondFactorConfirm :one
-- Turns the second factor on with the step of its first code.
UPDATE staff_second_factors SET confirmed_at = @now, last_step = @step
WHERE staff_user_id = @staff_user_id AND confirmed_at IS NULL
RETURNING *;

-- name: SecondFactorUseStep :execrows
-- Takes a code's time step once: of two sign-ins with the same code, or
-- an older one after it, only the first finds last_step below its step.
UPDATE staff_second_factors SET last_step = @step
WHERE staff_user_id = @staff_user_id AND confirmed_at IS NOT NULL AND last_step < @step;

-- name: SecondFactorDelete :many
-- Whether the deleted second factor was on (none: there was none).
DELETE FROM staff_second_factors WHERE staff_user_id = @staff_user_id
RETURNING (confirmed_at IS NOT NULL)::boolean AS was_on;

-- name: RecoveryCodesDelete :exec
DELETE FROM staff_recovery_codes WHERE staff_user_id = @staff_user_id;

-- name: RecoveryCodeInsert :exec
INSERT INTO staff_recovery_codes (staff_user_id, code_hash) VALUES (@staff_user_id, @code_hash);

-- name: RecoveryCodeUse :execrows
-- Uses a recovery code up: one statement, so of two sign-ins with the
-- same code exactly one deletes the row.
DELETE FROM staff_recovery_codes WHERE staff_user_id = @staff_user_id AND code_hash = @code_hash;

-- name: RecoveryCodeCount :one
SELECT count(*) FROM staff_recovery_codes WHERE staff_user_id = @staff_user_id;

-- name: ClinicSetRequireSecondFactor :execrows
-- No row when the clinic already has that setting.
UPDATE clinics SET require_second_factor = @required, updated_at = now()
WHERE id = @id AND require_second_factor <> @required;

-- name: StaffSessionStart :exec
INSERT INTO staff_sessions (token_hash, staff_user_id, browser, address, signed_in_at, last_seen_at)
VALUES (@token_hash, @staff_user_id, @browser, @address, @now, @now)
ON CONFLICT (token_hash) DO UPDATE SET staff_user_id = EXCLUDED.staff_user_id, browser = EXCLUDED.browser,
    address = EXCLUDED.address, signed_in_at = EXCLUDED.signed_in_at, last_seen_at = EXCLUDED.last_seen_at, ended_at = NULL;

-- name: StaffSessionSeen :exec
-- Last seen; a session signed in before the list existed gets its row.
INSERT INTO staff_sessions (token_hash, staff_user_id, browser, address, signed_in_at, last_seen_at)
VALUES (@token_hash, @staff_user_id, @browser, @address, @now, @now)
ON CONFLICT (token_hash) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, address = EXCLUDED.address
WHERE staff_sessions.ended_at IS NULL AND staff_sessions.staff_user_id = EXCLUDED.staff_user_id;

-- name: StaffSessionList :many
-- The account's sessions that the store still holds, unexpired.
SELECT s.id, s.token_hash, s.browser, s.address, s.signed_in_at, s.last_seen_at
FROM staff_sessions s
WHERE s.staff_user_id = @staff_user_id AND s.ended_at IS NULL
  AND EXISTS (SELECT 1 FROM sessions x WHERE sha256(x.token::bytea) = s.token_hash AND x.expiry > @now)
ORDER BY s.last_seen_at DESC;

-- name: StaffSessionPrune :exec
-- Rows of sessions the store no longer holds (signed out, expired). An
-- ended one stays marked for a day (longer than any session lives), in
-- case a request under way when it ended writes it back to the store.
DELETE FROM staff_sessions s
WHERE s.staff_user_id = @staff_user_id
  AND (s.ended_at IS NULL OR s.ended_at < @ended_before)
  AND NOT EXISTS (SELECT 1 FROM sessions x WHERE sha256(x.token::bytea) = s.token_hash);

-- name: StaffSessionEnd :many
-- Ends sessions of the account: the one named by id, or (every_other) every one
-- but the token hash keep. Their rows stay marked until the store's rows
-- are gone, so a request under way cannot bring them back.
WITH ended AS (
    UPDATE staff_sessions SET ended_at = @now
    WHERE staff_user_id = @staff_user_id AND ended_at IS NULL
      AND (id = @id OR (@every_other::boolean AND token_hash <> @keep::bytea))
    RETURNING token_hash
), gone AS (
    DELETE FROM sessions WHERE sha256(token::bytea) IN (SELECT token_hash FROM ended)
)
SELECT token_hash FROM ended;

-- name: StaffSessionForget :exec
-- The row of a session that signed out.
DELETE FROM staff_sessions WHERE token_hash = @token_hash;

-- name: SecondFactorOnInClinic :many
-- The accounts of the clinic whose second factor is on.
SELECT f.staff_user_id FROM staff_second_factors f JOIN staff_users u ON u.id = f.staff_user_id
WHERE u.clinic_id = @clinic_id AND f.confirmed_at IS NOT NULL;
