-- name: AppointmentTypeGet :one
SELECT * FROM appointment_types WHERE id = @id;

-- name: AppointmentTypeListByClinic :many
SELECT * FROM appointment_types WHERE clinic_id = @clinic_id ORDER BY duration_min, name;

-- name: AppointmentTypeGetByName :one
SELECT * FROM appointment_types WHERE clinic_id = @clinic_id AND name = @name;

-- name: AppointmentTypeInsert :one
-- A NULL reminder_min takes a day, the column's own default, so callers
-- that do not set it get the usual reminder; NULL translations, none; a
-- NULL change deadline, the clinic's default.
INSERT INTO appointment_types (
    clinic_id, name, description, duration_min, slot_step_min, buffer_before_min, buffer_after_min,
    min_notice_min, max_advance_days, cooldown_min, max_holds_per_client, reminder_min, translations,
    change_deadline_hours
) VALUES (
    @clinic_id, @name, @description, @duration_min, @slot_step_min, @buffer_before_min, @buffer_after_min,
    @min_notice_min, @max_advance_days, @cooldown_min, @max_holds_per_client,
    COALESCE(sqlc.narg(reminder_min)::integer, 1440),
    COALESCE(sqlc.narg(translations)::jsonb, '{}'::jsonb),
    sqlc.narg(change_deadline_hours)::integer
)
RETURNING *;

-- name: AppointmentTypeSpecialistAdd :exec
INSERT INTO appointment_type_specialists (clinic_id, appointment_type_id, specialist_id)
VALUES (@clinic_id, @appointment_type_id, @specialist_id)
ON CONFLICT DO NOTHING;

-- name: AppointmentTypeSpecialistExists :one
SELECT EXISTS (
    SELECT 1 FROM appointment_type_specialists
    WHERE appointment_type_id = @appointment_type_id AND specialist_id = @specialist_id
);

-- name: AppointmentTypeSpecialistListByClinic :many
SELECT ats.appointment_type_id, s.id, s.name, s.priority, s.active
FROM appointment_type_specialists ats
JOIN specialists s ON s.id = ats.specialist_id
WHERE ats.clinic_id = @clinic_id
ORDER BY s.priority DESC, s.name;

-- name: AppointmentTypeGetWithClinic :one
-- needs_resource: the type needs a room or device (appointment_type_resources).
SELECT sqlc.embed(appointment_types), clinics.timezone, clinics.slug AS clinic_slug,
       (n.appointment_type_id IS NOT NULL)::boolean AS needs_resource
FROM appointment_types
JOIN clinics ON clinics.id = appointment_types.clinic_id
LEFT JOIN appointment_type_resources n
  ON n.clinic_id = appointment_types.clinic_id AND n.appointment_type_id = appointment_types.id
WHERE appointment_types.id = @id;

-- name: AppointmentTypeGetInClinic :one
SELECT * FROM appointment_types WHERE id = @id AND clinic_id = @clinic_id;

-- name: AppointmentTypeUpdate :one
UPDATE appointment_types
SET name = @name, description = @description, duration_min = @duration_min, slot_step_min = @slot_step_min,
    buffer_before_min = @buffer_before_min, buffer_after_min = @buffer_after_min,
    min_notice_min = @min_notice_min, max_advance_days = @max_advance_days,
    cooldown_min = @cooldown_min, max_holds_per_client = @max_holds_per_client,
    reminder_min = @reminder_min,
    change_deadline_hours = sqlc.narg(change_deadline_hours)::integer,
    translations = COALESCE(sqlc.narg(translations)::jsonb, translations),
    version = version + 1, updated_at = now()
WHERE id = @id AND clinic_id = @clinic_id AND version = @version
RETURNING *;

-- name: AppointmentTypeSpecialistDeleteAll :exec
DELETE FROM appointment_type_specialists WHERE appointment_type_id = @appointment_type_id;

-- name: AppointmentTypeSpecialistIDs :many
SELECT specialist_id FROM appointment_type_specialists WHERE appointment_type_id = @appointment_type_id ORDER BY specialist_id;

-- name: AppointmentTypeLockInClinic :one
SELECT * FROM appointment_types WHERE id = @id AND clinic_id = @clinic_id FOR UPDATE;

-- name: AppointmentTypeSeedTranslations :exec
-- The demo type's names and descriptions in other languages, unless it
-- has some already (staff may have written their own).
UPDATE appointment_types SET translations = @translations::jsonb
WHERE id = @id AND clinic_id = @clinic_id AND translations = '{}'::jsonb;
