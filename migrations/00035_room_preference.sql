-- +goose Up
-- The room an insert names (the one its hold promised) is a preference,
-- not a condition: when another booking took it meanwhile (a desk
-- booking, which holds no room, or a move that kept its room), a free
-- room of the need is given instead, and a named room of a type that no
-- longer needs one is dropped. A lost race is still an exclusion
-- violation when no room of the need is free.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bookings_take_resource() RETURNS trigger LANGUAGE plpgsql AS $$
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
        NEW.resource_id := NULL;
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
      AND resource_open(NEW.clinic_id, r.id, NEW.slot_start, NEW.slot_end)
      AND NOT EXISTS (
          SELECT 1 FROM bookings b
          WHERE b.clinic_id = NEW.clinic_id AND b.resource_id = r.id AND b.status = 'confirmed'
            AND tstzrange(b.slot_start, b.slot_end, '[)') && tstzrange(NEW.slot_start, NEW.slot_end, '[)')
      )
    ORDER BY r.id IS NOT DISTINCT FROM NEW.resource_id DESC, r.id IS NOT DISTINCT FROM kept DESC, r.id
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bookings_take_resource() RETURNS trigger LANGUAGE plpgsql AS $$
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
