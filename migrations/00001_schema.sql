-- +goose Up
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- A clinic's zone must be an IANA name PostgreSQL knows; the Go side checks it
-- against the tz database too, so both layers refuse "Mars/Olympus".
-- +goose StatementBegin
CREATE FUNCTION is_iana_timezone(tz text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT tz <> '' AND tz <> 'localtime' AND tz <> 'posixrules'
       AND EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = tz)
$$;
-- +goose StatementEnd

CREATE TABLE clinics (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    slug       text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name       text NOT NULL CHECK (name <> ''),
    timezone   text NOT NULL CHECK (is_iana_timezone(timezone)),
    address    text NOT NULL DEFAULT '',
    version    integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE specialists (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    clinic_id  uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (name <> ''),
    priority   integer NOT NULL DEFAULT 0,
    active     boolean NOT NULL DEFAULT true,
    version    integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- Lets child tables reference (clinic_id, id), so a row can never point
    -- at a specialist of another clinic.
    UNIQUE (clinic_id, id)
);

CREATE TABLE appointment_types (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    clinic_id            uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    name                 text NOT NULL CHECK (name <> ''),
    description          text NOT NULL DEFAULT '',
    duration_min         integer NOT NULL CHECK (duration_min > 0 AND duration_min <= 1440),
    slot_step_min        integer NOT NULL CHECK (slot_step_min > 0 AND slot_step_min <= 1440),
    buffer_before_min    integer NOT NULL DEFAULT 0 CHECK (buffer_before_min >= 0),
    buffer_after_min     integer NOT NULL DEFAULT 0 CHECK (buffer_after_min >= 0),
    min_notice_min       integer NOT NULL DEFAULT 0 CHECK (min_notice_min >= 0),
    max_advance_days     integer NOT NULL DEFAULT 60 CHECK (max_advance_days > 0),
    cooldown_min         integer NOT NULL DEFAULT 1440 CHECK (cooldown_min >= 0),
    max_holds_per_client integer NOT NULL DEFAULT 1 CHECK (max_holds_per_client > 0),
    version              integer NOT NULL DEFAULT 1,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (clinic_id, id)
);

CREATE TABLE appointment_type_specialists (
    clinic_id           uuid NOT NULL,
    appointment_type_id uuid NOT NULL,
    specialist_id       uuid NOT NULL,
    PRIMARY KEY (appointment_type_id, specialist_id),
    FOREIGN KEY (clinic_id, appointment_type_id) REFERENCES appointment_types (clinic_id, id) ON DELETE CASCADE,
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE CASCADE
);
CREATE INDEX appointment_type_specialists_specialist_idx ON appointment_type_specialists (specialist_id);

-- Weekly hours are local wall-clock times in the clinic's zone; weekday
-- follows Go's time.Weekday (0 = Sunday). Several ranges a day are several rows.
CREATE TABLE weekly_hours (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    clinic_id     uuid NOT NULL,
    specialist_id uuid NOT NULL,
    weekday       smallint NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    start_local   time NOT NULL,
    end_local     time NOT NULL CHECK (end_local <= '24:00'),
    CHECK (end_local > start_local),
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE CASCADE,
    EXCLUDE USING gist (
        specialist_id WITH =,
        weekday WITH =,
        int4range(extract(epoch FROM start_local)::integer, extract(epoch FROM end_local)::integer) WITH &&
    )
);

-- An override replaces a specialist's weekly hours on one local date: either
-- closed, or one row per replacement range.
CREATE TABLE overrides (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    clinic_id     uuid NOT NULL,
    specialist_id uuid NOT NULL,
    day           date NOT NULL,
    closed        boolean NOT NULL,
    start_local   time,
    end_local     time CHECK (end_local <= '24:00'),
    note          text NOT NULL DEFAULT '',
    CHECK (
        (closed AND start_local IS NULL AND end_local IS NULL)
        OR (NOT closed AND start_local IS NOT NULL AND end_local IS NOT NULL AND end_local > start_local)
    ),
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE CASCADE,
    EXCLUDE USING gist (
        specialist_id WITH =,
        day WITH =,
        int4range(
            CASE WHEN closed THEN 0 ELSE extract(epoch FROM start_local)::integer END,
            CASE WHEN closed THEN 86400 ELSE extract(epoch FROM end_local)::integer END
        ) WITH &&
    )
);

CREATE TABLE bookings (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    clinic_id           uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    appointment_type_id uuid NOT NULL,
    specialist_id       uuid NOT NULL,
    slot_start          timestamptz NOT NULL,
    slot_end            timestamptz NOT NULL,
    status              text NOT NULL DEFAULT 'confirmed'
                        CHECK (status IN ('confirmed', 'cancelled', 'rescheduled')),
    patient_name        text NOT NULL CHECK (patient_name <> ''),
    patient_email       text NOT NULL,
    patient_phone       text NOT NULL DEFAULT '',
    client_id           text NOT NULL DEFAULT '',
    manage_token_hash   bytea UNIQUE,
    rescheduled_from    uuid REFERENCES bookings (id),
    cancel_reason       text NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL DEFAULT now(),
    cancelled_at        timestamptz,
    version             integer NOT NULL DEFAULT 1,
    CHECK (slot_end > slot_start),
    FOREIGN KEY (clinic_id, appointment_type_id) REFERENCES appointment_types (clinic_id, id),
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id),
    -- The correctness gate, part two: bookings of different lengths cannot
    -- overlap either. (Part one is the unique index below.)
    CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        specialist_id WITH =,
        tstzrange(slot_start, slot_end, '[)') WITH &&
    ) WHERE (status = 'confirmed')
);
-- The correctness gate, part one: the ON CONFLICT arbiter of every booking insert.
CREATE UNIQUE INDEX bookings_no_double_book ON bookings (specialist_id, slot_start) WHERE status = 'confirmed';
CREATE INDEX bookings_clinic_start_idx ON bookings (clinic_id, slot_start);
CREATE INDEX bookings_type_start_idx ON bookings (appointment_type_id, slot_start) WHERE status = 'confirmed';

CREATE TABLE staff_users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    clinic_id     uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    email         text NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
    name          text NOT NULL DEFAULT '',
    password_hash text NOT NULL,
    role          text NOT NULL CHECK (role IN ('admin', 'staff')),
    version       integer NOT NULL DEFAULT 1,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (email)
);

CREATE TABLE idempotency_keys (
    clinic_id    uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    principal    text NOT NULL,
    route        text NOT NULL,
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    status_code  integer NOT NULL,
    body         bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (clinic_id, principal, route, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

CREATE TABLE audit_log (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    clinic_id uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    actor     text NOT NULL,
    action    text NOT NULL,
    entity    text NOT NULL,
    entity_id text NOT NULL,
    before    jsonb,
    after     jsonb,
    reason    text NOT NULL DEFAULT '',
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_clinic_at_idx ON audit_log (clinic_id, at DESC);
CREATE INDEX audit_log_entity_idx ON audit_log (entity, entity_id);

-- scs's pgxstore table.
CREATE TABLE sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- +goose Down
DROP TABLE sessions;
DROP TABLE audit_log;
DROP TABLE idempotency_keys;
DROP TABLE staff_users;
DROP TABLE bookings;
DROP TABLE overrides;
DROP TABLE weekly_hours;
DROP TABLE appointment_type_specialists;
DROP TABLE appointment_types;
DROP TABLE specialists;
DROP TABLE clinics;
DROP FUNCTION is_iana_timezone(text);
