-- +goose Up
-- Messages to patients. A row here is written in the same transaction as
-- the booking change it tells of, together with the queue job that sends
-- it (the queue's own tables come from its migrations, run alongside
-- these); the row keeps what staff see of it: its kind, its state and
-- when it was accepted by the mail server.

-- The language the patient booked in, so that their e-mails speak it.
ALTER TABLE bookings ADD COLUMN language text NOT NULL DEFAULT '';

-- How long before the appointment its reminder goes out; 0: none.
ALTER TABLE appointment_types ADD COLUMN reminder_min integer NOT NULL DEFAULT 1440
    CHECK (reminder_min BETWEEN 0 AND 20160);

-- Further manage links of a booking, besides the one its confirmation page
-- showed: each e-mail carries a link of its own (only the hash is kept, so
-- a link cannot be read back to be sent again). A moved booking's links
-- follow it to the new booking.
CREATE TABLE booking_links (
    token_hash bytea PRIMARY KEY,
    booking_id uuid NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX booking_links_booking ON booking_links (booking_id);

CREATE TABLE messages (
    id          uuid PRIMARY KEY,
    clinic_id   uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    booking_id  uuid REFERENCES bookings (id) ON DELETE CASCADE,
    kind        text NOT NULL
                CHECK (kind IN ('confirmation', 'reminder', 'change', 'cancellation', 'lookup')),
    recipient   text NOT NULL,
    language    text NOT NULL DEFAULT '',
    -- A change notice's previous booking; a notice's reason from staff.
    previous_id uuid REFERENCES bookings (id) ON DELETE CASCADE,
    reason      text NOT NULL DEFAULT '',
    status      text NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'sending', 'sent', 'retrying', 'failed', 'cancelled')),
    job_id      bigint,
    send_at     timestamptz NOT NULL,
    attempts    integer NOT NULL DEFAULT 0,
    last_error  text NOT NULL DEFAULT '',
    accepted_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_booking ON messages (booking_id, created_at);
CREATE INDEX messages_waiting ON messages (send_at) WHERE status IN ('queued', 'retrying', 'sending');

-- Without a mail server configured, the rendered messages are kept here
-- for the staff's development outbox page instead of being sent.
CREATE TABLE outbox_copies (
    message_id uuid PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    clinic_id  uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    recipient  text NOT NULL,
    subject    text NOT NULL,
    raw        bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_copies_clinic ON outbox_copies (clinic_id, created_at DESC);

-- +goose Down
DROP TABLE outbox_copies;
DROP TABLE messages;
DROP TABLE booking_links;
ALTER TABLE appointment_types DROP COLUMN reminder_min;
ALTER TABLE bookings DROP COLUMN language;
