-- name: SigninLinkInsert :one
INSERT INTO staff_signin_links (clinic_id, staff_user_id, token_hash, expires_at)
VALUES (@clinic_id, @staff_user_id, @token_hash, @expires_at)
RETURNING *;

-- name: SigninLinkRevokeUnused :execrows
-- Older links of the account that were never used stop working.
UPDATE staff_signin_links SET revoked_at = @now
WHERE staff_user_id = @staff_user_id AND used_at IS NULL AND revoked_at IS NULL;

-- name: SigninLinkGet :one
SELECT l.id, l.clinic_id, l.staff_user_id, l.expires_at, l.used_at, l.revoked_at,
       u.email, u.disabled_at, c.name AS clinic_name
FROM staff_signin_links l
JOIN staff_users u ON u.id = l.staff_user_id
JOIN clinics c ON c.id = l.clinic_id
WHERE l.token_hash = @token_hash;

-- name: SigninLinkConsume :one
-- Uses the link when it is still good; no row otherwise. Of two
-- concurrent uses the second waits for the first's row lock, then finds
-- used_at set and gets no row.
UPDATE staff_signin_links SET used_at = @now
WHERE token_hash = @token_hash AND used_at IS NULL AND revoked_at IS NULL AND expires_at > @now
RETURNING *;

-- name: StaffUserSetPassword :one
UPDATE staff_users SET password_hash = @password_hash, version = version + 1
WHERE id = @id
RETURNING *;

-- name: StaffUserRehash :execrows
-- The same password at a higher bcrypt cost, unless it changed meanwhile.
UPDATE staff_users SET password_hash = @new_hash
WHERE id = @id AND password_hash = @old_hash;

-- name: StaffUserGetInClinicBySlug :one
SELECT u.* FROM staff_users u JOIN clinics c ON c.id = u.clinic_id
WHERE u.email = @email AND c.slug = @slug;
