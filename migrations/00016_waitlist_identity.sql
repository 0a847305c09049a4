-- +goose Up
-- A waitlist place carries the identity keys of its patient's e-mail
-- address and phone number (internal/identity), set by the application
-- when the place is taken, so that the offer's match passes over a
-- patient who booked the type meanwhile under any spelling of the same
-- address or number, as the booking gate would refuse them.
ALTER TABLE waitlist_entries
    ADD COLUMN patient_email_key text NOT NULL DEFAULT '',
    ADD COLUMN patient_phone_key text NOT NULL DEFAULT '';

-- The places taken so far, keyed as bookings' were when their keys came
-- in (by the functions that migration made, dropped here).
UPDATE waitlist_entries
SET patient_email_key = migration_email_key(patient_email),
    patient_phone_key = migration_phone_key(patient_phone);
DROP FUNCTION migration_phone_key(text);
DROP FUNCTION migration_email_key(text);

-- +goose Down
ALTER TABLE waitlist_entries DROP COLUMN patient_phone_key, DROP COLUMN patient_email_key;
