-- name: PrivacyPatientBookings :many
-- Every booking of one patient at a clinic, past and future, in any
-- state: those whose e-mail key or phone key is the patient's (an empty
-- key matches nothing).
SELECT * FROM bookings
WHERE clinic_id = sqlc.arg(clinic_id)
  AND ((sqlc.arg(email_key)::text <> '' AND patient_email_key = sqlc.arg(email_key)::text)
    OR (sqlc.arg(phone_key)::text <> '' AND patient_phone_key = sqlc.arg(phone_key)::text))
ORDER BY slot_start, created_at;
