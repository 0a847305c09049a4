-- name: SpecialistGet :one
SELECT * FROM specialists WHERE id = @id;

-- name: SpecialistListByClinic :many
SELECT * FROM specialists WHERE clinic_id = @clinic_id ORDER BY priority DESC, name;

-- name: SpecialistGetByName :one
SELECT * FROM specialists WHERE clinic_id = @clinic_id AND name = @name;

-- name: SpecialistInsert :one
INSERT INTO specialists (clinic_id, name, priority, active)
VALUES (@clinic_id, @name, @priority, @active)
RETURNING *;

-- name: SpecialistListByType :many
-- The specialists who perform an appointment type, active or not.
SELECT s.* FROM specialists s
JOIN appointment_type_specialists ats ON ats.specialist_id = s.id
WHERE ats.appointment_type_id = @appointment_type_id
ORDER BY s.priority DESC, s.id;

-- name: SpecialistGetInClinic :one
SELECT * FROM specialists WHERE id = @id AND clinic_id = @clinic_id;

-- name: SpecialistUpdate :one
-- Optimistic concurrency: no row when the version moved on.
UPDATE specialists
SET name = @name, priority = @priority, active = @active, version = version + 1, updated_at = now()
WHERE id = @id AND clinic_id = @clinic_id AND version = @version
RETURNING *;

-- name: SpecialistBumpVersion :one
-- Hours and overrides are edited under their specialist's version.
UPDATE specialists SET version = version + 1, updated_at = now()
WHERE id = @id AND clinic_id = @clinic_id AND version = @version
RETURNING *;

-- name: SpecialistLockInClinic :one
-- Locks the row for an edit, so a refused edit reports what won.
SELECT * FROM specialists WHERE id = @id AND clinic_id = @clinic_id FOR UPDATE;
