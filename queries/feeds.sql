-- Calendar subscriptions (calendar_feeds): a specialist's, or a staff
-- account's own.

-- name: CalendarFeedRevokeSpecialist :execrows
UPDATE calendar_feeds SET revoked_at = now()
WHERE clinic_id = @clinic_id AND specialist_id = @specialist_id AND revoked_at IS NULL;

-- name: CalendarFeedRevokeAccount :execrows
UPDATE calendar_feeds SET revoked_at = now()
WHERE clinic_id = @clinic_id AND staff_user_id = @staff_user_id AND revoked_at IS NULL;

-- name: CalendarFeedInsert :one
INSERT INTO calendar_feeds (clinic_id, specialist_id, staff_user_id, token_hash)
VALUES (@clinic_id, sqlc.narg(specialist_id), sqlc.narg(staff_user_id), @token_hash)
RETURNING id, created_at;

-- name: CalendarFeedSpecialistSince :many
SELECT created_at FROM calendar_feeds
WHERE clinic_id = @clinic_id AND specialist_id = @specialist_id AND revoked_at IS NULL;

-- name: CalendarFeedAccountSince :many
SELECT created_at FROM calendar_feeds
WHERE clinic_id = @clinic_id AND staff_user_id = @staff_user_id AND revoked_at IS NULL;

-- The feed a token opens: not revoked, and for an account's feed, an
-- account still enabled. specialist_id is whose bookings it carries: the
-- feed's specialist, or the account's (NULL: an account not linked).
-- name: CalendarFeedByToken :one
SELECT f.id, f.clinic_id, f.token_hash, s.id AS specialist_id, s.name AS specialist_name,
       c.name AS clinic_name, c.language, c.feed_patient_names
FROM calendar_feeds f
JOIN clinics c ON c.id = f.clinic_id
LEFT JOIN staff_users u ON u.id = f.staff_user_id
LEFT JOIN specialists s ON s.clinic_id = f.clinic_id AND s.id = coalesce(f.specialist_id, u.specialist_id)
WHERE f.token_hash = @token_hash AND f.revoked_at IS NULL
  AND (f.staff_user_id IS NULL OR u.disabled_at IS NULL);

-- A specialist's bookings in [from, to) that still take their time
-- (cancelled and moved-away ones left out), with what a feed says of them;
-- a booking whose details were erased or removed has no name.
-- name: CalendarFeedBookings :many
SELECT b.id, b.slot_start, b.slot_end, b.attendance,
       (CASE WHEN b.anonymised_at IS NULL THEN b.patient_name ELSE '' END)::text AS patient_name,
       greatest(b.created_at, coalesce(b.attendance_at, b.created_at))::timestamptz AS changed_at,
       t.name AS type_name, t.translations AS type_translations
FROM bookings b
JOIN appointment_types t ON t.clinic_id = b.clinic_id AND t.id = b.appointment_type_id
WHERE b.clinic_id = @clinic_id AND b.specialist_id = @specialist_id AND b.status = 'confirmed'
  AND b.slot_start < @until AND b.slot_end > @since
ORDER BY b.slot_start, b.id;

-- name: StaffUserSpecialistSet :execrows
UPDATE staff_users SET specialist_id = sqlc.narg(specialist_id)
WHERE clinic_id = @clinic_id AND id = @id;

-- name: StaffUserSpecialistClear :exec
UPDATE staff_users SET specialist_id = NULL
WHERE clinic_id = @clinic_id AND specialist_id = @specialist_id;

-- name: StaffUsersOfSpecialist :many
SELECT id, email, name FROM staff_users
WHERE clinic_id = @clinic_id AND specialist_id = @specialist_id ORDER BY email;

-- name: StaffUserSpecialistName :one
SELECT s.id, s.name FROM staff_users u JOIN specialists s ON s.clinic_id = u.clinic_id AND s.id = u.specialist_id
WHERE u.id = @id;

-- name: ClinicFeedNamesSet :exec
UPDATE clinics SET feed_patient_names = @feed_patient_names, updated_at = now() WHERE id = @id;
