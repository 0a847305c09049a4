-- A series is a course of sessions booked as one (six physiotherapy
-- sessions, weekly at the same time with the same therapist). It holds
-- what the course is, never who it is for: its bookings carry the
-- patient, each one a booking like any other, bound by the same gate,
-- and each naming the series and its place in it.

-- +goose Up
CREATE TABLE series (
    id                  uuid NOT NULL DEFAULT gen_random_uuid(),
    clinic_id           uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    appointment_type_id uuid NOT NULL,
    specialist_id       uuid NOT NULL,
    -- Every how many days a session falls (7: weekly), and how many were
    -- planned; the bookings are the sessions chosen of them.
    every_days          integer NOT NULL CHECK (every_days BETWEEN 1 AND 365),
    planned             integer NOT NULL CHECK (planned BETWEEN 1 AND 52),
    created_by          text NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id, clinic_id),
    FOREIGN KEY (clinic_id, appointment_type_id) REFERENCES appointment_types (clinic_id, id),
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id)
);

ALTER TABLE bookings
    ADD COLUMN series_id       uuid,
    ADD COLUMN series_position integer,
    ADD CONSTRAINT bookings_series_fkey FOREIGN KEY (clinic_id, series_id) REFERENCES series (clinic_id, id),
    ADD CONSTRAINT bookings_series_position CHECK ((series_id IS NULL) = (series_position IS NULL));
CREATE INDEX bookings_series_idx ON bookings (series_id, series_position) WHERE series_id IS NOT NULL;

-- One e-mail tells of a whole series booked, and one of the sessions of
-- a series cancelled from one on.
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('confirmation', 'reminder', 'change', 'cancellation', 'lookup', 'waitlist_joined', 'waitlist_offer',
                    'series', 'series_cancellation'));

-- +goose Down
DELETE FROM messages WHERE kind IN ('series', 'series_cancellation');
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('confirmation', 'reminder', 'change', 'cancellation', 'lookup', 'waitlist_joined', 'waitlist_offer'));
DROP INDEX bookings_series_idx;
ALTER TABLE bookings
    DROP CONSTRAINT bookings_series_position,
    DROP CONSTRAINT bookings_series_fkey,
    DROP COLUMN series_position,
    DROP COLUMN series_id;
DROP TABLE series;
