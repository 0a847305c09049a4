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
INSERT INTO clinics (slug, name, timezone, address, language)
VALUES (@slug, @name, @timezone, @address, @language)
ON CONFLICT (slug) DO NOTHING
RETURNING *;

-- name: ClinicListWithStaffCount :many
SELECT c.*, (SELECT count(*) FROM staff_users u WHERE u.clinic_id = c.id)::bigint AS staff_count
FROM clinics c
ORDER BY c.slug;
