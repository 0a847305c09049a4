-- +goose Up
-- The patient cooldown: a patient booking is refused while the same e-mail
-- (case aside) or the same phone number (its digits) has a confirmed
-- booking of the type made within the type's cooldown. These index the
-- lookup the booking gate runs under the patient's lock.
CREATE INDEX bookings_cooldown_email_idx
    ON bookings (appointment_type_id, lower(patient_email), created_at)
    WHERE status = 'confirmed';
CREATE INDEX bookings_cooldown_phone_idx
    ON bookings (appointment_type_id, regexp_replace(patient_phone, '\D', '', 'g'), created_at)
    WHERE status = 'confirmed' AND patient_phone <> '';

-- +goose Down
DROP INDEX bookings_cooldown_phone_idx;
DROP INDEX bookings_cooldown_email_idx;
