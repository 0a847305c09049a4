-- name: ClinicGetBySlug :one
SELECT * FROM clinics WHERE slug = @slug;

-- name: ClinicGet :one
SELECT * FROM clinics WHERE id = @id;

-- name: ClinicList :many
SELECT * FROM clinics ORDER BY name;

-- name: ClinicUpsert :one
INSERT INTO clinics (slug, name, timezone, address)
VALUES (@slug, @name, @timezone, @address)
ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name, timezone = EXCLUDED.timezone, address = EXCLUDED.address
RETURNING *;

-- name: ClinicTimezone :one
SELECT timezone FROM clinics WHERE id = @id;

-- name: ClinicCreate :one
-- A new clinic; no row when the slug is taken.
INSERT INTO clinics (slug, name, timezone, address, language, retention_months, mail_retention_days)
VALUES (@slug, @name, @timezone, @address, @language, @retention_months, @mail_retention_days)
ON CONFLICT (slug) DO NOTHING
RETURNING *;

-- name: ClinicListWithStaffCount :many
SELECT c.*, (SELECT count(*) FROM staff_users u WHERE u.clinic_id = c.id)::bigint AS staff_count
FROM clinics c
ORDER BY c.slug;

-- name: ClinicGetForUpdate :one
-- The clinic, locked until the settings change that read it commits.
SELECT * FROM clinics WHERE id = @id FOR UPDATE;

-- name: ClinicSettingsUpdate :one
-- The settings page's save; no row when version is no longer current.
UPDATE clinics SET
    name = @name, address = @address, contact_phone = @contact_phone, contact_email = @contact_email,
    language = @language, timezone = @timezone, country = @country,
    default_slot_step_min = @default_slot_step_min, default_min_notice_min = @default_min_notice_min,
    default_max_advance_days = @default_max_advance_days, default_cooldown_min = @default_cooldown_min,
    default_change_deadline_hours = @default_change_deadline_hours,
    verification = @verification,
    retention_months = @retention_months, mail_retention_days = @mail_retention_days,
    controller_name = @controller_name, privacy_contact = @privacy_contact,
    version = version + 1, updated_at = now()
WHERE id = @id AND version = @version
RETURNING *;

-- name: ClinicConfirmedBookingsEndingAfter :many
-- The clinic's confirmed bookings that end after since, soonest first.
SELECT id, specialist_id, slot_start, slot_end FROM bookings
WHERE clinic_id = @clinic_id AND status = 'confirmed' AND slot_end > @since::timestamptz
ORDER BY slot_start, id;

-- name: ClinicVerification :one
-- When the clinic asks online bookings for an e-mailed code.
SELECT verification FROM clinics WHERE id = @id;

-- name: ClinicContactSeed :exec
-- The demo clinic's phone and e-mail, unless it has either already.
UPDATE clinics SET contact_phone = @contact_phone, contact_email = @contact_email
WHERE id = @id AND contact_phone = '' AND contact_email = '';
