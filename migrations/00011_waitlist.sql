-- +goose Up
-- The waitlist. A patient waits for a type (with one specialist, or any)
-- within a range of days and, if they say so, times of day. A time that
-- becomes free is an opening; it is offered to one waiting patient at a
-- time, in order of joining, under a hold of the slot.
CREATE TABLE waitlist_entries (
    id                  uuid PRIMARY KEY,
    clinic_id           uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    appointment_type_id uuid NOT NULL,
    specialist_id       uuid,
    from_date           date NOT NULL,
    to_date             date NOT NULL,
    -- Parts of the day the patient can come: any of 'morning' (before
    -- 12:00), 'afternoon' (12:00-17:00), 'evening' (from 17:00); none is
    -- any time.
    times               text[] NOT NULL DEFAULT '{}'
                        CHECK (times <@ ARRAY['morning', 'afternoon', 'evening']),
    patient_name        text NOT NULL CHECK (patient_name <> ''),
    patient_email       text NOT NULL CHECK (patient_email <> ''),
    patient_phone       text NOT NULL DEFAULT '',
    language            text NOT NULL DEFAULT '',
    client_id           text NOT NULL DEFAULT '',
    -- waiting: in the list; offered: a time is offered to them now; booked:
    -- they took one; left: they left; removed: staff removed them; lapsed:
    -- an offer to them ran out unanswered, or their days passed.
    state               text NOT NULL DEFAULT 'waiting'
                        CHECK (state IN ('waiting', 'offered', 'booked', 'left', 'removed', 'lapsed')),
    joined_at           timestamptz NOT NULL DEFAULT now(),
    ended_at            timestamptz,
    booking_id          uuid REFERENCES bookings (id) ON DELETE SET NULL,
    CHECK (to_date >= from_date),
    FOREIGN KEY (clinic_id, appointment_type_id) REFERENCES appointment_types (clinic_id, id) ON DELETE CASCADE,
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE CASCADE
);
-- One place per address and type while it lasts.
CREATE UNIQUE INDEX waitlist_one_per_email ON waitlist_entries (appointment_type_id, lower(patient_email))
    WHERE state IN ('waiting', 'offered');
CREATE INDEX waitlist_waiting ON waitlist_entries (appointment_type_id, joined_at) WHERE state = 'waiting';
CREATE INDEX waitlist_clinic ON waitlist_entries (clinic_id, joined_at);

-- A link to an entry's page (and, with offer_id, to an offer's). Only the
-- hash of its token is kept; every e-mail mints its own.
CREATE TABLE waitlist_links (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    entry_id   uuid NOT NULL REFERENCES waitlist_entries (id) ON DELETE CASCADE,
    offer_id   uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A time that became free while patients wait for it.
CREATE TABLE waitlist_openings (
    id                  uuid PRIMARY KEY,
    clinic_id           uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    appointment_type_id uuid NOT NULL,
    specialist_id       uuid NOT NULL,
    slot_start          timestamptz NOT NULL,
    slot_end            timestamptz NOT NULL,
    -- cancel, move, or staff (offered by hand).
    cause               text NOT NULL CHECK (cause IN ('cancel', 'move', 'staff')),
    freed_at            timestamptz NOT NULL,
    -- The hold that keeps the time while it is offered, owned by the
    -- opening ("waitlist:" and its id), not by any one patient.
    hold_id             text NOT NULL DEFAULT '',
    -- open: being offered; booked: an offer was taken; released: nobody
    -- (more) took it, and it is free for everyone.
    state               text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'booked', 'released')),
    closed_at           timestamptz,
    CHECK (slot_end > slot_start),
    FOREIGN KEY (clinic_id, appointment_type_id) REFERENCES appointment_types (clinic_id, id) ON DELETE CASCADE,
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE CASCADE
);
-- One opening per freed time: however many processes hear of it.
CREATE UNIQUE INDEX waitlist_one_opening ON waitlist_openings (specialist_id, slot_start) WHERE state = 'open';

CREATE TABLE waitlist_offers (
    id         uuid PRIMARY KEY,
    opening_id uuid NOT NULL REFERENCES waitlist_openings (id) ON DELETE CASCADE,
    entry_id   uuid NOT NULL REFERENCES waitlist_entries (id) ON DELETE CASCADE,
    state      text NOT NULL DEFAULT 'open'
               CHECK (state IN ('open', 'accepted', 'declined', 'expired', 'withdrawn')),
    offered_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    ended_at   timestamptz,
    booking_id uuid REFERENCES bookings (id) ON DELETE SET NULL,
    -- The job that follows the offer up at its expiry (or at once, when
    -- it is declined).
    next_job_id bigint,
    UNIQUE (opening_id, entry_id)
);
-- One live offer per freed time, and per waiting patient.
CREATE UNIQUE INDEX waitlist_one_offer_per_opening ON waitlist_offers (opening_id) WHERE state = 'open';
CREATE UNIQUE INDEX waitlist_one_offer_per_entry ON waitlist_offers (entry_id) WHERE state = 'open';

-- The waitlist's e-mails: the place taken, and an offer.
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('confirmation', 'reminder', 'change', 'cancellation', 'lookup', 'waitlist_joined', 'waitlist_offer'));
ALTER TABLE messages
    ADD COLUMN entry_id uuid REFERENCES waitlist_entries (id) ON DELETE CASCADE,
    ADD COLUMN offer_id uuid REFERENCES waitlist_offers (id) ON DELETE CASCADE;

-- +goose Down
ALTER TABLE messages DROP COLUMN offer_id, DROP COLUMN entry_id;
DELETE FROM messages WHERE kind IN ('waitlist_joined', 'waitlist_offer');
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('confirmation', 'reminder', 'change', 'cancellation', 'lookup'));
DROP TABLE waitlist_offers;
DROP TABLE waitlist_openings;
DROP TABLE waitlist_links;
DROP TABLE waitlist_entries;
