-- Every key of a table that belongs to one clinic names the clinic: its
-- primary key, its unique keys and exclusion constraints, and its foreign
-- keys to other such tables. A distributed PostgreSQL (Citus, distributed
-- by clinic_id) can enforce a key only within one clinic's shard, so it
-- refuses keys without the column; here they cost nothing and keep every
-- guarantee, since a clinic's rows never refer to another clinic's.
-- The tables without clinic_id of the staff (staff_users and what hangs
-- from it), clinics, server_secrets and sessions are not split by clinic:
-- docs/scaling.md says which tables are which and why.

-- +goose Up

-- The three tables that lacked the column take it from their parent row.
ALTER TABLE booking_links ADD COLUMN clinic_id uuid;
UPDATE booking_links l SET clinic_id = b.clinic_id FROM bookings b WHERE b.id = l.booking_id;
ALTER TABLE booking_links ALTER COLUMN clinic_id SET NOT NULL;

ALTER TABLE waitlist_links ADD COLUMN clinic_id uuid;
UPDATE waitlist_links l SET clinic_id = e.clinic_id FROM waitlist_entries e WHERE e.id = l.entry_id;
ALTER TABLE waitlist_links ALTER COLUMN clinic_id SET NOT NULL;

ALTER TABLE waitlist_offers ADD COLUMN clinic_id uuid;
UPDATE waitlist_offers o SET clinic_id = op.clinic_id FROM waitlist_openings op WHERE op.id = o.opening_id;
ALTER TABLE waitlist_offers ALTER COLUMN clinic_id SET NOT NULL;

-- Foreign keys on a row's id alone go before the primary keys they use.
ALTER TABLE bookings DROP CONSTRAINT bookings_rescheduled_from_fkey;
ALTER TABLE booking_links DROP CONSTRAINT booking_links_booking_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_booking_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_previous_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_entry_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_offer_id_fkey;
ALTER TABLE outbox_copies DROP CONSTRAINT outbox_copies_message_id_fkey;
ALTER TABLE waitlist_entries DROP CONSTRAINT waitlist_entries_booking_id_fkey;
ALTER TABLE waitlist_links DROP CONSTRAINT waitlist_links_entry_id_fkey;
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_opening_id_fkey;
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_entry_id_fkey;
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_booking_id_fkey;

-- Primary keys: the row's own key first, so that a look-up by id alone
-- still finds it by the index.
ALTER TABLE specialists DROP CONSTRAINT specialists_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE appointment_types DROP CONSTRAINT appointment_types_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE appointment_type_specialists DROP CONSTRAINT appointment_type_specialists_pkey,
    ADD PRIMARY KEY (appointment_type_id, specialist_id, clinic_id);
ALTER TABLE weekly_hours DROP CONSTRAINT weekly_hours_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE overrides DROP CONSTRAINT overrides_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE bookings DROP CONSTRAINT bookings_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE booking_links DROP CONSTRAINT booking_links_pkey, ADD PRIMARY KEY (token_hash, clinic_id);
ALTER TABLE audit_log DROP CONSTRAINT audit_log_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE kiosk_tokens DROP CONSTRAINT kiosk_tokens_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE outbox_copies DROP CONSTRAINT outbox_copies_pkey, ADD PRIMARY KEY (message_id, clinic_id);
ALTER TABLE waitlist_entries DROP CONSTRAINT waitlist_entries_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE waitlist_links DROP CONSTRAINT waitlist_links_pkey, ADD PRIMARY KEY (token_hash, clinic_id);
ALTER TABLE waitlist_openings DROP CONSTRAINT waitlist_openings_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE erasures DROP CONSTRAINT erasures_pkey, ADD PRIMARY KEY (id, clinic_id);
ALTER TABLE access_records DROP CONSTRAINT access_records_pkey, ADD PRIMARY KEY (id, clinic_id);

-- Unique keys and the booking gate. A specialist belongs to one clinic, so
-- adding the clinic to (specialist, start) refuses exactly what it did.
ALTER TABLE bookings DROP CONSTRAINT bookings_manage_token_hash_key,
    ADD CONSTRAINT bookings_manage_token_hash_key UNIQUE (manage_token_hash, clinic_id);
ALTER TABLE kiosk_tokens DROP CONSTRAINT kiosk_tokens_token_hash_key,
    ADD CONSTRAINT kiosk_tokens_token_hash_key UNIQUE (token_hash, clinic_id);
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_opening_id_entry_id_key,
    ADD CONSTRAINT waitlist_offers_opening_id_entry_id_key UNIQUE (opening_id, entry_id, clinic_id);

DROP INDEX bookings_no_double_book;
CREATE UNIQUE INDEX bookings_no_double_book ON bookings (specialist_id, slot_start, clinic_id) WHERE status = 'confirmed';
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap,
    ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        clinic_id WITH =,
        specialist_id WITH =,
        tstzrange(slot_start, slot_end, '[)') WITH &&
    ) WHERE (status = 'confirmed');
ALTER TABLE weekly_hours DROP CONSTRAINT weekly_hours_specialist_id_weekday_int4range_excl,
    ADD CONSTRAINT weekly_hours_specialist_id_weekday_int4range_excl EXCLUDE USING gist (
        clinic_id WITH =,
        specialist_id WITH =,
        weekday WITH =,
        int4range(extract(epoch FROM start_local)::integer, extract(epoch FROM end_local)::integer) WITH &&
    );
ALTER TABLE overrides DROP CONSTRAINT overrides_specialist_id_day_int4range_excl,
    ADD CONSTRAINT overrides_specialist_id_day_int4range_excl EXCLUDE USING gist (
        clinic_id WITH =,
        specialist_id WITH =,
        day WITH =,
        int4range(
            CASE WHEN closed THEN 0 ELSE extract(epoch FROM start_local)::integer END,
            CASE WHEN closed THEN 86400 ELSE extract(epoch FROM end_local)::integer END
        ) WITH &&
    );

DROP INDEX waitlist_one_per_email;
CREATE UNIQUE INDEX waitlist_one_per_email ON waitlist_entries (appointment_type_id, lower(patient_email), clinic_id)
    WHERE state IN ('waiting', 'offered');
DROP INDEX waitlist_one_opening;
CREATE UNIQUE INDEX waitlist_one_opening ON waitlist_openings (specialist_id, slot_start, clinic_id) WHERE state = 'open';
DROP INDEX waitlist_one_offer_per_opening;
CREATE UNIQUE INDEX waitlist_one_offer_per_opening ON waitlist_offers (opening_id, clinic_id) WHERE state = 'open';
DROP INDEX waitlist_one_offer_per_entry;
CREATE UNIQUE INDEX waitlist_one_offer_per_entry ON waitlist_offers (entry_id, clinic_id) WHERE state = 'open';

-- The foreign keys again, each with the clinic. SET NULL clears only the
-- reference, never the row's clinic.
ALTER TABLE bookings ADD CONSTRAINT bookings_rescheduled_from_fkey
    FOREIGN KEY (clinic_id, rescheduled_from) REFERENCES bookings (clinic_id, id);
ALTER TABLE booking_links ADD CONSTRAINT booking_links_booking_id_fkey
    FOREIGN KEY (clinic_id, booking_id) REFERENCES bookings (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_booking_id_fkey
    FOREIGN KEY (clinic_id, booking_id) REFERENCES bookings (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_previous_id_fkey
    FOREIGN KEY (clinic_id, previous_id) REFERENCES bookings (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_entry_id_fkey
    FOREIGN KEY (clinic_id, entry_id) REFERENCES waitlist_entries (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_offer_id_fkey
    FOREIGN KEY (clinic_id, offer_id) REFERENCES waitlist_offers (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE outbox_copies ADD CONSTRAINT outbox_copies_message_id_fkey
    FOREIGN KEY (clinic_id, message_id) REFERENCES messages (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE waitlist_entries ADD CONSTRAINT waitlist_entries_booking_id_fkey
    FOREIGN KEY (clinic_id, booking_id) REFERENCES bookings (clinic_id, id) ON DELETE SET NULL (booking_id);
ALTER TABLE waitlist_links ADD CONSTRAINT waitlist_links_entry_id_fkey
    FOREIGN KEY (clinic_id, entry_id) REFERENCES waitlist_entries (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE waitlist_offers ADD CONSTRAINT waitlist_offers_opening_id_fkey
    FOREIGN KEY (clinic_id, opening_id) REFERENCES waitlist_openings (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE waitlist_offers ADD CONSTRAINT waitlist_offers_entry_id_fkey
    FOREIGN KEY (clinic_id, entry_id) REFERENCES waitlist_entries (clinic_id, id) ON DELETE CASCADE;
ALTER TABLE waitlist_offers ADD CONSTRAINT waitlist_offers_booking_id_fkey
    FOREIGN KEY (clinic_id, booking_id) REFERENCES bookings (clinic_id, id) ON DELETE SET NULL (booking_id);

-- +goose Down

ALTER TABLE bookings DROP CONSTRAINT bookings_rescheduled_from_fkey;
ALTER TABLE booking_links DROP CONSTRAINT booking_links_booking_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_booking_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_previous_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_entry_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_offer_id_fkey;
ALTER TABLE outbox_copies DROP CONSTRAINT outbox_copies_message_id_fkey;
ALTER TABLE waitlist_entries DROP CONSTRAINT waitlist_entries_booking_id_fkey;
ALTER TABLE waitlist_links DROP CONSTRAINT waitlist_links_entry_id_fkey;
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_opening_id_fkey;
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_entry_id_fkey;
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_booking_id_fkey;

DROP INDEX waitlist_one_offer_per_entry;
CREATE UNIQUE INDEX waitlist_one_offer_per_entry ON waitlist_offers (entry_id) WHERE state = 'open';
DROP INDEX waitlist_one_offer_per_opening;
CREATE UNIQUE INDEX waitlist_one_offer_per_opening ON waitlist_offers (opening_id) WHERE state = 'open';
DROP INDEX waitlist_one_opening;
CREATE UNIQUE INDEX waitlist_one_opening ON waitlist_openings (specialist_id, slot_start) WHERE state = 'open';
DROP INDEX waitlist_one_per_email;
CREATE UNIQUE INDEX waitlist_one_per_email ON waitlist_entries (appointment_type_id, lower(patient_email))
    WHERE state IN ('waiting', 'offered');

ALTER TABLE overrides DROP CONSTRAINT overrides_specialist_id_day_int4range_excl,
    ADD CONSTRAINT overrides_specialist_id_day_int4range_excl EXCLUDE USING gist (
        specialist_id WITH =,
        day WITH =,
        int4range(
            CASE WHEN closed THEN 0 ELSE extract(epoch FROM start_local)::integer END,
            CASE WHEN closed THEN 86400 ELSE extract(epoch FROM end_local)::integer END
        ) WITH &&
    );
ALTER TABLE weekly_hours DROP CONSTRAINT weekly_hours_specialist_id_weekday_int4range_excl,
    ADD CONSTRAINT weekly_hours_specialist_id_weekday_int4range_excl EXCLUDE USING gist (
        specialist_id WITH =,
        weekday WITH =,
        int4range(extract(epoch FROM start_local)::integer, extract(epoch FROM end_local)::integer) WITH &&
    );
ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap,
    ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        specialist_id WITH =,
        tstzrange(slot_start, slot_end, '[)') WITH &&
    ) WHERE (status = 'confirmed');
DROP INDEX bookings_no_double_book;
CREATE UNIQUE INDEX bookings_no_double_book ON bookings (specialist_id, slot_start) WHERE status = 'confirmed';

ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_opening_id_entry_id_key,
    ADD CONSTRAINT waitlist_offers_opening_id_entry_id_key UNIQUE (opening_id, entry_id);
ALTER TABLE kiosk_tokens DROP CONSTRAINT kiosk_tokens_token_hash_key,
    ADD CONSTRAINT kiosk_tokens_token_hash_key UNIQUE (token_hash);
ALTER TABLE bookings DROP CONSTRAINT bookings_manage_token_hash_key,
    ADD CONSTRAINT bookings_manage_token_hash_key UNIQUE (manage_token_hash);

ALTER TABLE access_records DROP CONSTRAINT access_records_pkey, ADD PRIMARY KEY (id);
ALTER TABLE erasures DROP CONSTRAINT erasures_pkey, ADD PRIMARY KEY (id);
ALTER TABLE waitlist_offers DROP CONSTRAINT waitlist_offers_pkey, ADD PRIMARY KEY (id);
ALTER TABLE waitlist_openings DROP CONSTRAINT waitlist_openings_pkey, ADD PRIMARY KEY (id);
ALTER TABLE waitlist_links DROP CONSTRAINT waitlist_links_pkey, ADD PRIMARY KEY (token_hash);
ALTER TABLE waitlist_entries DROP CONSTRAINT waitlist_entries_pkey, ADD PRIMARY KEY (id);
ALTER TABLE outbox_copies DROP CONSTRAINT outbox_copies_pkey, ADD PRIMARY KEY (message_id);
ALTER TABLE messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (id);
ALTER TABLE kiosk_tokens DROP CONSTRAINT kiosk_tokens_pkey, ADD PRIMARY KEY (id);
ALTER TABLE audit_log DROP CONSTRAINT audit_log_pkey, ADD PRIMARY KEY (id);
ALTER TABLE booking_links DROP CONSTRAINT booking_links_pkey, ADD PRIMARY KEY (token_hash);
ALTER TABLE bookings DROP CONSTRAINT bookings_pkey, ADD PRIMARY KEY (id);
ALTER TABLE overrides DROP CONSTRAINT overrides_pkey, ADD PRIMARY KEY (id);
ALTER TABLE weekly_hours DROP CONSTRAINT weekly_hours_pkey, ADD PRIMARY KEY (id);
ALTER TABLE appointment_type_specialists DROP CONSTRAINT appointment_type_specialists_pkey,
    ADD PRIMARY KEY (appointment_type_id, specialist_id);
ALTER TABLE appointment_types DROP CONSTRAINT appointment_types_pkey, ADD PRIMARY KEY (id);
ALTER TABLE specialists DROP CONSTRAINT specialists_pkey, ADD PRIMARY KEY (id);

ALTER TABLE bookings ADD CONSTRAINT bookings_rescheduled_from_fkey
    FOREIGN KEY (rescheduled_from) REFERENCES bookings (id);
ALTER TABLE booking_links ADD CONSTRAINT booking_links_booking_id_fkey
    FOREIGN KEY (booking_id) REFERENCES bookings (id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_booking_id_fkey
    FOREIGN KEY (booking_id) REFERENCES bookings (id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_previous_id_fkey
    FOREIGN KEY (previous_id) REFERENCES bookings (id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_entry_id_fkey
    FOREIGN KEY (entry_id) REFERENCES waitlist_entries (id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_offer_id_fkey
    FOREIGN KEY (offer_id) REFERENCES waitlist_offers (id) ON DELETE CASCADE;
ALTER TABLE outbox_copies ADD CONSTRAINT outbox_copies_message_id_fkey
    FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE;
ALTER TABLE waitlist_entries ADD CONSTRAINT waitlist_entries_booking_id_fkey
    FOREIGN KEY (booking_id) REFERENCES bookings (id) ON DELETE SET NULL;
ALTER TABLE waitlist_links ADD CONSTRAINT waitlist_links_entry_id_fkey
    FOREIGN KEY (entry_id) REFERENCES waitlist_entries (id) ON DELETE CASCADE;
ALTER TABLE waitlist_offers ADD CONSTRAINT waitlist_offers_opening_id_fkey
    FOREIGN KEY (opening_id) REFERENCES waitlist_openings (id) ON DELETE CASCADE;
ALTER TABLE waitlist_offers ADD CONSTRAINT waitlist_offers_entry_id_fkey
    FOREIGN KEY (entry_id) REFERENCES waitlist_entries (id) ON DELETE CASCADE;
ALTER TABLE waitlist_offers ADD CONSTRAINT waitlist_offers_booking_id_fkey
    FOREIGN KEY (booking_id) REFERENCES bookings (id) ON DELETE SET NULL;

ALTER TABLE waitlist_offers DROP COLUMN clinic_id;
ALTER TABLE waitlist_links DROP COLUMN clinic_id;
ALTER TABLE booking_links DROP COLUMN clinic_id;
