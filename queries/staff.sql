-- name: StaffUserUpsert :one
INSERT INTO staff_users (clinic_id, email, name, password_hash, role)
VALUES (@clinic_id, @email, @name, @password_hash, @role)
ON CONFLICT (email) DO NOTHING
RETURNING *;

-- name: StaffUserGetByEmail :one
SELECT * FROM staff_users WHERE email = @email;
