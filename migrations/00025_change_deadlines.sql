-- Change deadlines: until how many hours before its start a patient may
-- move a booking online. The clinic's default applies to every type that
-- has none of its own (NULL); 0 means no deadline. A patient's cancel
-- inside the window still goes through and is marked late, for staff to
-- see beside the no-shows.

-- +goose Up
ALTER TABLE clinics
    ADD COLUMN default_change_deadline_hours integer NOT NULL DEFAULT 0
        CHECK (default_change_deadline_hours BETWEEN 0 AND 720);
ALTER TABLE appointment_types
    ADD COLUMN change_deadline_hours integer
        CHECK (change_deadline_hours BETWEEN 0 AND 720);
ALTER TABLE bookings
    ADD COLUMN late_cancel boolean NOT NULL DEFAULT false;
CREATE INDEX bookings_late_cancel_idx ON bookings (clinic_id) WHERE late_cancel;

-- +goose Down
DROP INDEX bookings_late_cancel_idx;
ALTER TABLE bookings DROP COLUMN late_cancel;
ALTER TABLE appointment_types DROP COLUMN change_deadline_hours;
ALTER TABLE clinics DROP COLUMN default_change_deadline_hours;
