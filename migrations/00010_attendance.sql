-- +goose Up
-- Whether the patient came: marked by the front desk on the booking's day.
-- It is no status of the booking: an arrived, completed or missed booking
-- stays confirmed and keeps its time taken. '' is not marked (yet, or
-- marked and undone); attendance_at is when the current mark was set.
ALTER TABLE bookings
    ADD COLUMN attendance text NOT NULL DEFAULT ''
        CHECK (attendance IN ('', 'arrived', 'no_show', 'completed')),
    ADD COLUMN attendance_at timestamptz;

-- A clinic's no-shows, counted per patient when staff book them again.
CREATE INDEX bookings_no_show_idx ON bookings (clinic_id) WHERE attendance = 'no_show';

-- +goose Down
DROP INDEX bookings_no_show_idx;
ALTER TABLE bookings DROP COLUMN attendance_at, DROP COLUMN attendance;
