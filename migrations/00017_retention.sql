-- +goose Up
-- How long a clinic keeps its patients' details, and who answers for them.
--
-- retention_months: a booking keeps its patient's details this long after
-- the appointment ends; then they are removed and the booking stays as a
-- count (time, type, specialist, status, attendance). mail_retention_days:
-- the stored copies of e-mails and the queue's records of finished jobs
-- are kept this long after sending. controller_name and privacy_contact
-- name the controller and the data-protection contact on the patients'
-- privacy page, when the clinic's name and contact are not the right ones
-- (empty: the clinic's own).
ALTER TABLE clinics
    ADD COLUMN retention_months    integer NOT NULL DEFAULT 12
        CHECK (retention_months BETWEEN 1 AND 120),
    ADD COLUMN mail_retention_days integer NOT NULL DEFAULT 30
        CHECK (mail_retention_days BETWEEN 1 AND 365),
    ADD COLUMN controller_name     text NOT NULL DEFAULT '',
    ADD COLUMN privacy_contact     text NOT NULL DEFAULT '';

-- When a booking's patient details were removed (by retention or on the
-- patient's request); NULL while it still has them. The name keeps a fixed
-- placeholder instead (the column is never empty), so every reader of a
-- booking goes on working with anonymised rows.
ALTER TABLE bookings ADD COLUMN anonymised_at timestamptz;
-- The daily run looks only at the bookings that still have details.
CREATE INDEX bookings_retention_idx ON bookings (clinic_id, slot_end) WHERE anonymised_at IS NULL;

-- +goose Down
DROP INDEX bookings_retention_idx;
ALTER TABLE bookings DROP COLUMN anonymised_at;
ALTER TABLE clinics
    DROP COLUMN privacy_contact,
    DROP COLUMN controller_name,
    DROP COLUMN mail_retention_days,
    DROP COLUMN retention_months;
