-- Resources: rooms and devices a type may need besides its specialist.
-- Times travel as minutes from local midnight (24:00 = 1440), as hours do.

-- name: ResourceInsert :one
INSERT INTO resources (clinic_id, name, kind, always_open, active)
VALUES (@clinic_id, @name, @kind, @always_open, @active)
RETURNING *;

-- name: ResourceUpdate :one
-- Edits a room as its editor saw it: no row when someone else saved it
-- (its details or its hours) since.
UPDATE resources
SET name = @name, kind = @kind, always_open = @always_open, active = @active, version = version + 1
WHERE clinic_id = @clinic_id AND id = @id AND version = @version
RETURNING *;

-- name: ResourceLock :one
SELECT * FROM resources WHERE clinic_id = @clinic_id AND id = @id FOR UPDATE;

-- name: ResourceBumpVersion :one
-- A change of a room's hours as its editor saw the room: no row when
-- someone else saved it since.
UPDATE resources SET version = version + 1
WHERE clinic_id = @clinic_id AND id = @id AND version = @version
RETURNING *;

-- name: ResourceGet :one
SELECT * FROM resources WHERE clinic_id = @clinic_id AND id = @id;

-- name: ResourceList :many
SELECT * FROM resources WHERE clinic_id = @clinic_id ORDER BY kind, name, id;

-- name: ResourceHoursList :many
SELECT weekday,
       (extract(epoch FROM start_local) / 60)::integer AS start_min,
       (extract(epoch FROM end_local) / 60)::integer AS end_min
FROM resource_hours
WHERE clinic_id = @clinic_id AND resource_id = @resource_id
ORDER BY weekday, start_local;

-- name: ResourceHoursDelete :exec
DELETE FROM resource_hours WHERE clinic_id = @clinic_id AND resource_id = @resource_id;

-- name: ResourceHoursInsert :exec
INSERT INTO resource_hours (clinic_id, resource_id, weekday, start_local, end_local)
VALUES (@clinic_id, @resource_id, @weekday,
        make_interval(mins => @start_min::integer)::time,
        CASE WHEN @end_min::integer = 1440 THEN '24:00'::time ELSE make_interval(mins => @end_min::integer)::time END);

-- name: ResourceClosureInsert :one
INSERT INTO resource_closures (clinic_id, resource_id, first_day, last_day, note)
VALUES (@clinic_id, @resource_id, @first_day, @last_day, @note)
RETURNING id;

-- name: ResourceClosureList :many
-- A resource's closures that end on or after from_day, soonest first.
SELECT id, first_day, last_day, note FROM resource_closures
WHERE clinic_id = @clinic_id AND resource_id = @resource_id AND last_day >= @from_day::date
ORDER BY first_day, id;

-- name: ResourceClosureDelete :execrows
DELETE FROM resource_closures WHERE clinic_id = @clinic_id AND resource_id = @resource_id AND id = @id;

-- name: TypeNeedSet :exec
-- What a type needs: one resource of a kind, or one resource (exactly one
-- of the two is set).
INSERT INTO appointment_type_resources (clinic_id, appointment_type_id, resource_kind, resource_id)
VALUES (@clinic_id, @appointment_type_id, sqlc.narg(resource_kind), sqlc.narg(resource_id))
ON CONFLICT (clinic_id, appointment_type_id)
DO UPDATE SET resource_kind = EXCLUDED.resource_kind, resource_id = EXCLUDED.resource_id;

-- name: TypeNeedClear :exec
DELETE FROM appointment_type_resources WHERE clinic_id = @clinic_id AND appointment_type_id = @appointment_type_id;

-- name: TypeNeedGet :one
SELECT resource_kind, resource_id FROM appointment_type_resources
WHERE clinic_id = @clinic_id AND appointment_type_id = @appointment_type_id;

-- name: TypeNeedList :many
-- The clinic's types that need a resource, with what they need.
SELECT n.appointment_type_id, n.resource_kind, n.resource_id
FROM appointment_type_resources n
WHERE n.clinic_id = @clinic_id;

-- name: BookingResourcesLock :exec
-- Locks every resource a booking of the type could take, in the order the
-- insert's trigger takes them (lock_type_resources): a move takes it
-- before it changes the booking it moves.
SELECT lock_type_resources(@clinic_id, @appointment_type_id);

-- name: ResourcesForType :many
-- The active resources that can serve a booking of the type: the one it
-- names, or those of the kind it needs. None when it needs none.
SELECT r.id, r.name, r.always_open
FROM appointment_type_resources n
JOIN resources r ON r.clinic_id = n.clinic_id
 AND (r.id = n.resource_id OR (n.resource_id IS NULL AND r.kind = n.resource_kind))
WHERE n.appointment_type_id = @appointment_type_id AND r.active
ORDER BY r.id;

-- name: ResourceHoursForType :many
SELECT h.resource_id, h.weekday,
       (extract(epoch FROM h.start_local) / 60)::integer AS start_min,
       (extract(epoch FROM h.end_local) / 60)::integer AS end_min
FROM appointment_type_resources n
JOIN resources r ON r.clinic_id = n.clinic_id
 AND (r.id = n.resource_id OR (n.resource_id IS NULL AND r.kind = n.resource_kind))
JOIN resource_hours h ON h.clinic_id = r.clinic_id AND h.resource_id = r.id
WHERE n.appointment_type_id = @appointment_type_id AND r.active
ORDER BY h.resource_id, h.weekday, h.start_local;

-- name: ResourceClosedDaysForType :many
-- Each local date from from_day to to_day on which a resource the type
-- could take is closed (its own closures; the clinic's are read with the
-- specialists' hours).
SELECT c.resource_id, d.day::date AS day
FROM appointment_type_resources n
JOIN resources r ON r.clinic_id = n.clinic_id
 AND (r.id = n.resource_id OR (n.resource_id IS NULL AND r.kind = n.resource_kind))
JOIN resource_closures c ON c.clinic_id = r.clinic_id AND c.resource_id = r.id
CROSS JOIN LATERAL generate_series(greatest(c.first_day, @from_day::date), least(c.last_day, @to_day::date), interval '1 day') AS d(day)
WHERE n.appointment_type_id = @appointment_type_id
  AND c.first_day <= @to_day::date AND c.last_day >= @from_day::date
ORDER BY 1, 2;

-- name: ResourceBookingsInRange :many
-- The confirmed bookings of the type's resources that overlap the range,
-- of whatever type they are.
SELECT b.resource_id::uuid AS resource_id, b.specialist_id, b.slot_start, b.slot_end
FROM bookings b
WHERE b.clinic_id = @clinic_id AND b.status = 'confirmed'
  AND b.resource_id = ANY(@resource_ids::uuid[])
  AND b.slot_start < @range_end AND b.slot_end > @range_start
ORDER BY b.resource_id, b.slot_start;

-- name: ResourceGetByName :one
SELECT * FROM resources WHERE clinic_id = @clinic_id AND name = @name;

-- name: TypeBookingsLock :exec
-- Locks the rows of the type's confirmed bookings from from_time on, in
-- the order of their ids, before the need's rooms are locked: a move
-- locks its booking's row before the rooms, so the need's change takes
-- them in that order too.
SELECT b.id FROM bookings b
WHERE b.clinic_id = @clinic_id AND b.appointment_type_id = @appointment_type_id
  AND b.status = 'confirmed' AND b.slot_start >= @from_time
ORDER BY b.id
FOR NO KEY UPDATE;

-- name: TypeBookingsReleaseRooms :execrows
-- Releases the rooms of the type's confirmed bookings from from_time on
-- that its need no longer asks for: all of them when it needs none, else
-- those whose room does not serve it (an inactive room still serves the
-- bookings it has).
UPDATE bookings b SET resource_id = NULL
WHERE b.clinic_id = @clinic_id AND b.appointment_type_id = @appointment_type_id
  AND b.status = 'confirmed' AND b.slot_start >= @from_time AND b.resource_id IS NOT NULL
  AND NOT EXISTS (
      SELECT 1 FROM appointment_type_resources n
      JOIN resources r ON r.clinic_id = n.clinic_id
       AND (r.id = n.resource_id OR (n.resource_id IS NULL AND r.kind = n.resource_kind))
      WHERE n.clinic_id = b.clinic_id AND n.appointment_type_id = b.appointment_type_id
        AND r.id = b.resource_id
  );

-- name: TypeBookingsWithoutRoom :many
-- The type's confirmed bookings from from_time on that hold no room,
-- soonest first.
SELECT b.id, b.slot_start, b.slot_end, b.specialist_id, s.name AS specialist_name
FROM bookings b
JOIN specialists s ON s.id = b.specialist_id
WHERE b.clinic_id = @clinic_id AND b.appointment_type_id = @appointment_type_id
  AND b.status = 'confirmed' AND b.slot_start >= @from_time AND b.resource_id IS NULL
ORDER BY b.slot_start, b.id;

-- name: BookingTakeFreeRoom :one
-- Gives a confirmed booking that holds no room the first free and open
-- room its type's need allows, as the insert's trigger chooses one;
-- resource_id stays NULL when none is free. The caller holds the type's
-- rooms' locks (lock_type_resources).
UPDATE bookings b SET resource_id = (
    SELECT r.id FROM appointment_type_resources n
    JOIN resources r ON r.clinic_id = n.clinic_id
     AND (r.id = n.resource_id OR (n.resource_id IS NULL AND r.kind = n.resource_kind))
    WHERE n.clinic_id = b.clinic_id AND n.appointment_type_id = b.appointment_type_id AND r.active
      AND resource_open(b.clinic_id, r.id, b.slot_start, b.slot_end)
      AND NOT EXISTS (
          SELECT 1 FROM bookings o
          WHERE o.clinic_id = b.clinic_id AND o.resource_id = r.id AND o.status = 'confirmed'
            AND tstzrange(o.slot_start, o.slot_end, '[)') && tstzrange(b.slot_start, b.slot_end, '[)')
      )
    ORDER BY r.id
    LIMIT 1
)
WHERE b.clinic_id = @clinic_id AND b.id = @id AND b.status = 'confirmed' AND b.resource_id IS NULL
RETURNING b.resource_id;

-- name: RoomClosureBookings :many
-- The confirmed bookings holding the room on the dates of its closures
-- that end on or after from_day, soonest first, with the closure each
-- falls in: what staff move before the room is closed.
SELECT c.id AS closure_id, b.id, b.specialist_id, b.slot_start, b.slot_end, b.patient_name, b.patient_email, b.patient_phone,
       b.version, t.name AS type_name, s.name AS specialist_name
FROM resource_closures c
JOIN clinics k ON k.id = c.clinic_id
JOIN bookings b ON b.clinic_id = c.clinic_id AND b.resource_id = c.resource_id AND b.status = 'confirmed'
JOIN appointment_types t ON t.id = b.appointment_type_id
JOIN specialists s ON s.id = b.specialist_id
WHERE c.clinic_id = @clinic_id AND c.resource_id = @resource_id AND c.last_day >= @from_day::date
  AND b.slot_start < ((c.last_day + 1)::timestamp AT TIME ZONE k.timezone)
  AND b.slot_end > (c.first_day::timestamp AT TIME ZONE k.timezone)
ORDER BY b.slot_start, c.id;

-- name: ResourceHoursListByClinic :many
-- Every room's weekly hours, for the day grid's rooms.
SELECT h.resource_id, h.weekday,
       (extract(epoch FROM h.start_local) / 60)::integer AS start_min,
       (extract(epoch FROM h.end_local) / 60)::integer AS end_min
FROM resource_hours h
WHERE h.clinic_id = @clinic_id
ORDER BY h.resource_id, h.weekday, h.start_local;

-- name: ResourceClosureListByClinicRange :many
-- The rooms' closures over any local date from from_day to to_day.
SELECT c.id, c.resource_id, c.first_day, c.last_day, c.note, r.name AS resource_name
FROM resource_closures c
JOIN resources r ON r.clinic_id = c.clinic_id AND r.id = c.resource_id
WHERE c.clinic_id = @clinic_id AND c.first_day <= @to_day::date AND c.last_day >= @from_day::date
ORDER BY c.first_day, r.name;

-- name: ResourcesOpenOver :many
-- Those of the rooms ids open over [range_start, range_end): not closed
-- on those days, and in their hours unless always open (as the gate
-- checks it).
SELECT r.id::uuid AS id FROM unnest(@ids::uuid[]) AS r (id)
WHERE resource_open(@clinic_id::uuid, r.id, @range_start::timestamptz, @range_end::timestamptz)
ORDER BY r.id;
