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
