-- +goose Up
-- A record of who looked: one row each time a staff page or fragment
-- showed patients' names or contacts (and each export), naming the staff
-- account, when, the page and which bookings, waitlist places and e-mails
-- it showed, by id only. It holds no patient detail, so erasing a patient
-- leaves it (it then names bookings that carry no details); retention
-- deletes rows older than the clinic's period for patient details.
--
-- One row per view with the ids as arrays rather than one row per
-- booking: a week grid shows a hundred bookings and costs one insert.
-- The GIN indexes answer "who looked at these bookings" (&&).
CREATE TABLE access_records (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    clinic_id    uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    -- No foreign key: the record outlives the account it names.
    staff_id     uuid NOT NULL,
    at           timestamptz NOT NULL DEFAULT now(),
    page         text NOT NULL CHECK (page <> '' AND length(page) <= 40),
    booking_ids  uuid[] NOT NULL DEFAULT '{}',
    waitlist_ids uuid[] NOT NULL DEFAULT '{}',
    message_ids  uuid[] NOT NULL DEFAULT '{}'
);
CREATE INDEX access_records_clinic_at ON access_records (clinic_id, at);
CREATE INDEX access_records_staff_at ON access_records (staff_id, at DESC);
CREATE INDEX access_records_bookings ON access_records USING gin (booking_ids);
CREATE INDEX access_records_waitlist ON access_records USING gin (waitlist_ids);

-- +goose Down
DROP TABLE access_records;
