-- Rooms and devices ("resources"): what an appointment needs besides its
-- specialist. A type may need one resource of a kind (any free one of the
-- clinic's is given, as "any specialist" is) or one resource by name; a
-- confirmed booking of such a type holds its resource for its time, and
-- two confirmed bookings of one resource never overlap, whoever their
-- specialists are. That is enforced here, as the specialist's own gate is:
-- PostgreSQL decides.
--
-- The need is a table of its own rather than columns of the type, so that
-- a type may later need several resources with rows, not new columns.
-- A resource's closures are a table of their own too: the clinic's
-- closures are read as "a specialist's, or the whole clinic's" wherever
-- slots are computed, and a room's closure is neither.

-- +goose Up
CREATE TABLE resources (
    id          uuid NOT NULL DEFAULT gen_random_uuid(),
    clinic_id   uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (name <> '' AND length(name) <= 100),
    -- What the resource is, as types ask for it: "ultrasound", "treatment-room".
    kind        text NOT NULL CHECK (kind ~ '^[a-z0-9][a-z0-9-]{0,39}$'),
    -- Open whenever the clinic is, or only in its weekly hours (resource_hours).
    always_open boolean NOT NULL DEFAULT true,
    active      boolean NOT NULL DEFAULT true,
    version     integer NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (clinic_id, id),
    UNIQUE (clinic_id, name)
);
CREATE INDEX resources_by_kind ON resources (clinic_id, kind);

-- A resource's weekly hours, as a specialist's: local wall-clock times in
-- the clinic's zone, weekday as Go's time.Weekday (0 = Sunday).
CREATE TABLE resource_hours (
    id          bigint GENERATED ALWAYS AS IDENTITY,
    clinic_id   uuid NOT NULL,
    resource_id uuid NOT NULL,
    weekday     smallint NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    start_local time NOT NULL,
    end_local   time NOT NULL CHECK (end_local <= '24:00'),
    CHECK (end_local > start_local),
    PRIMARY KEY (id, clinic_id),
    FOREIGN KEY (clinic_id, resource_id) REFERENCES resources (clinic_id, id) ON DELETE CASCADE,
    EXCLUDE USING gist (
        clinic_id WITH =,
        resource_id WITH =,
        weekday WITH =,
        int4range(extract(epoch FROM start_local)::integer, extract(epoch FROM end_local)::integer) WITH &&
    )
);

-- Runs of local dates on which a resource takes no bookings (repairs,
-- maintenance), as a specialist's closures.
CREATE TABLE resource_closures (
    id          bigint GENERATED ALWAYS AS IDENTITY,
    clinic_id   uuid NOT NULL,
    resource_id uuid NOT NULL,
    first_day   date NOT NULL,
    last_day    date NOT NULL,
    note        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id, clinic_id),
    CHECK (last_day >= first_day),
    CHECK (last_day - first_day < 366),
    FOREIGN KEY (clinic_id, resource_id) REFERENCES resources (clinic_id, id) ON DELETE CASCADE
);
CREATE INDEX resource_closures_by_days ON resource_closures (clinic_id, resource_id, last_day, first_day);

-- What a type needs: one resource of a kind, or one resource. A resource
-- a type names cannot be deleted (made inactive, it takes no bookings).
CREATE TABLE appointment_type_resources (
    clinic_id           uuid NOT NULL,
    appointment_type_id uuid NOT NULL,
    resource_kind       text,
    resource_id         uuid,
    CHECK ((resource_kind IS NULL) <> (resource_id IS NULL)),
    PRIMARY KEY (clinic_id, appointment_type_id),
    FOREIGN KEY (clinic_id, appointment_type_id) REFERENCES appointment_types (clinic_id, id) ON DELETE CASCADE,
    FOREIGN KEY (clinic_id, resource_id) REFERENCES resources (clinic_id, id)
);

-- The booking's resource, written with the booking. The correctness gate,
-- part three (beside bookings_no_double_book and bookings_no_overlap): two
-- confirmed bookings of one resource never overlap.
ALTER TABLE bookings ADD COLUMN resource_id uuid,
    ADD CONSTRAINT bookings_resource_fkey FOREIGN KEY (clinic_id, resource_id) REFERENCES resources (clinic_id, id),
    ADD CONSTRAINT bookings_no_resource_overlap EXCLUDE USING gist (
        clinic_id WITH =,
        resource_id WITH =,
        tstzrange(slot_start, slot_end, '[)') WITH &&
    ) WHERE (status = 'confirmed' AND resource_id IS NOT NULL);

-- Whether a resource is open over [from, until): not closed on any local
-- date the range touches (its own closures and the whole clinic's), and
-- always open or inside one range of its weekly hours on the start's
-- local date. Local times come from the clinic's zone, so a range across
-- a change of the clock is read as the wall clock shows it.
-- +goose StatementBegin
CREATE FUNCTION resource_open(p_clinic uuid, p_resource uuid, p_from timestamptz, p_until timestamptz)
RETURNS boolean LANGUAGE sql STABLE AS $$
    WITH w AS (
        SELECT (p_from AT TIME ZONE k.timezone) AS ls,
               (p_until AT TIME ZONE k.timezone) AS le
        FROM clinics k WHERE k.id = p_clinic
    )
    SELECT NOT EXISTS (
        SELECT 1 FROM resource_closures c, w
        WHERE c.clinic_id = p_clinic AND c.resource_id = p_resource
          AND c.first_day <= (w.le - interval '1 microsecond')::date AND c.last_day >= w.ls::date
    ) AND NOT EXISTS (
        SELECT 1 FROM closures c, w
        WHERE c.clinic_id = p_clinic AND c.specialist_id IS NULL
          AND c.first_day <= (w.le - interval '1 microsecond')::date AND c.last_day >= w.ls::date
    ) AND (
        (SELECT r.always_open FROM resources r WHERE r.clinic_id = p_clinic AND r.id = p_resource)
        OR EXISTS (
            SELECT 1 FROM resource_hours h, w
            WHERE h.clinic_id = p_clinic AND h.resource_id = p_resource
              AND h.weekday = extract(dow FROM w.ls)
              AND h.start_local <= w.ls::time
              AND w.le <= w.ls::date + h.end_local
        )
    )
$$;
-- +goose StatementEnd

-- Locks, until the transaction ends, every resource that could serve a
-- booking of the type, in the order of their ids. A move takes it before
-- it changes the booking it moves (BookingResourcesLock), as it takes the
-- specialist's lock, and the insert below takes it again (at once, since
-- its transaction holds it).
-- +goose StatementBegin
CREATE FUNCTION lock_type_resources(p_clinic uuid, p_type uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    rid uuid;
BEGIN
    FOR rid IN
        SELECT r.id
        FROM appointment_type_resources n
        JOIN resources r ON r.clinic_id = n.clinic_id
         AND (r.id = n.resource_id OR (n.resource_id IS NULL AND r.kind = n.resource_kind))
        WHERE n.clinic_id = p_clinic AND n.appointment_type_id = p_type
        ORDER BY r.id
    LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended('booking-resource:' || rid::text, 0));
    END LOOP;
END
$$;
-- +goose StatementEnd

-- Gives a confirmed booking of a type that needs a resource its resource,
-- on every path that inserts one (the one-statement gate, the step-by-step
-- one, a move, a series), in the insert's own transaction.
--
-- Locks: every resource that could serve the booking is locked, in the
-- order of their ids, before one is chosen. Two bookings of one resource
-- then never meet in the exclusion constraint's index at once (each would
-- wait for the other's uncommitted row: a deadlock PostgreSQL breaks by
-- aborting one), and the choice below sees every booking committed by the
-- lock's previous holder. Every path has taken the specialist's lock
-- before (BookingSpecialistLock), so the order is always the patient's,
-- the specialist's, then the resources' in id order.
--
-- The choice: the resource named by the insert, if it serves; otherwise
-- the moved booking's own resource if it is still free, else the first
-- free and open one. None: an exclusion violation (SQLSTATE 23P01), which
-- every path already reads as a lost race for the slot, with nothing
-- written.
-- +goose StatementBegin
CREATE FUNCTION bookings_take_resource() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    need_kind text;
    need_id   uuid;
    rid       uuid;
    kept      uuid;
BEGIN
    SELECT n.resource_kind, n.resource_id INTO need_kind, need_id
    FROM appointment_type_resources n
    WHERE n.clinic_id = NEW.clinic_id AND n.appointment_type_id = NEW.appointment_type_id;
    IF NOT FOUND THEN
        IF NEW.resource_id IS NOT NULL THEN
            RAISE EXCEPTION 'appointment type % needs no resource', NEW.appointment_type_id
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END IF;

    PERFORM lock_type_resources(NEW.clinic_id, NEW.appointment_type_id);

    IF NEW.rescheduled_from IS NOT NULL THEN
        SELECT b.resource_id INTO kept FROM bookings b
        WHERE b.id = NEW.rescheduled_from AND b.clinic_id = NEW.clinic_id;
    END IF;

    SELECT r.id INTO rid
    FROM resources r
    WHERE r.clinic_id = NEW.clinic_id AND r.active
      AND (r.id = need_id OR (need_id IS NULL AND r.kind = need_kind))
      AND (NEW.resource_id IS NULL OR r.id = NEW.resource_id)
      AND resource_open(NEW.clinic_id, r.id, NEW.slot_start, NEW.slot_end)
      AND NOT EXISTS (
          SELECT 1 FROM bookings b
          WHERE b.clinic_id = NEW.clinic_id AND b.resource_id = r.id AND b.status = 'confirmed'
            AND tstzrange(b.slot_start, b.slot_end, '[)') && tstzrange(NEW.slot_start, NEW.slot_end, '[)')
      )
    ORDER BY r.id IS NOT DISTINCT FROM kept DESC, r.id
    LIMIT 1;
    IF rid IS NULL THEN
        RAISE EXCEPTION 'no free resource for the booking'
            USING ERRCODE = 'exclusion_violation', CONSTRAINT = 'bookings_no_resource_overlap';
    END IF;
    NEW.resource_id := rid;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER bookings_take_resource BEFORE INSERT ON bookings
    FOR EACH ROW WHEN (NEW.status = 'confirmed') EXECUTE FUNCTION bookings_take_resource();

-- +goose Down
DROP TRIGGER bookings_take_resource ON bookings;
DROP FUNCTION bookings_take_resource();
DROP FUNCTION lock_type_resources(uuid, uuid);
DROP FUNCTION resource_open(uuid, uuid, timestamptz, timestamptz);
ALTER TABLE bookings DROP CONSTRAINT bookings_no_resource_overlap,
    DROP CONSTRAINT bookings_resource_fkey,
    DROP COLUMN resource_id;
DROP TABLE appointment_type_resources;
DROP TABLE resource_closures;
DROP TABLE resource_hours;
DROP TABLE resources;
