-- Times travel as minutes from local midnight (24:00 = 1440), the unit of
-- the slot engine.


-- name: WeeklyHoursListByType :many
SELECT wh.specialist_id, wh.weekday,
       (extract(epoch FROM wh.start_local) / 60)::integer AS start_min,
       (extract(epoch FROM wh.end_local) / 60)::integer AS end_min
FROM weekly_hours wh
JOIN appointment_type_specialists ats ON ats.specialist_id = wh.specialist_id
WHERE ats.appointment_type_id = @appointment_type_id
ORDER BY wh.specialist_id, wh.weekday, wh.start_local;

-- name: WeeklyHoursInsert :exec
INSERT INTO weekly_hours (clinic_id, specialist_id, weekday, start_local, end_local)
VALUES (@clinic_id, @specialist_id, @weekday,
        make_interval(mins => @start_min::integer)::time,
        CASE WHEN @end_min::integer = 1440 THEN '24:00'::time ELSE make_interval(mins => @end_min::integer)::time END);

-- name: WeeklyHoursDeleteBySpecialist :exec
DELETE FROM weekly_hours WHERE specialist_id = @specialist_id;

-- name: OverrideListByType :many
-- A type's specialists' overrides in a range, with each date of a closure
-- that covers one of them (theirs or the clinic's) as a closed override:
-- the slot engine knows no closures, only closed days.
SELECT o.specialist_id, o.day, o.closed,
       coalesce((extract(epoch FROM o.start_local) / 60)::integer, 0)::integer AS start_min,
       coalesce((extract(epoch FROM o.end_local) / 60)::integer, 0)::integer AS end_min,
       o.note
FROM overrides o
JOIN appointment_type_specialists ats ON ats.specialist_id = o.specialist_id
WHERE ats.appointment_type_id = @appointment_type_id
  AND o.day BETWEEN @from_day::date AND @to_day::date
UNION ALL
SELECT ats.specialist_id, d.day::date AS day, true AS closed, 0 AS start_min, 0 AS end_min, c.note
FROM appointment_type_specialists ats
JOIN closures c ON c.clinic_id = ats.clinic_id
  AND (c.specialist_id IS NULL OR c.specialist_id = ats.specialist_id)
CROSS JOIN LATERAL generate_series(greatest(c.first_day, @from_day::date), least(c.last_day, @to_day::date), interval '1 day') AS d(day)
WHERE ats.appointment_type_id = @appointment_type_id
  AND c.first_day <= @to_day::date AND c.last_day >= @from_day::date
ORDER BY 1, 2, 4;

-- name: OverrideInsertClosed :exec
INSERT INTO overrides (clinic_id, specialist_id, day, closed, note)
VALUES (@clinic_id, @specialist_id, @day, true, @note)
ON CONFLICT DO NOTHING;


-- name: WeeklyHoursCountBySpecialist :one
SELECT count(*) FROM weekly_hours WHERE specialist_id = @specialist_id;

-- name: OverrideCountBySpecialist :one
SELECT count(*) FROM overrides WHERE specialist_id = @specialist_id;

-- name: WeeklyHoursListBySpecialist :many
SELECT weekday,
       (extract(epoch FROM start_local) / 60)::integer AS start_min,
       (extract(epoch FROM end_local) / 60)::integer AS end_min
FROM weekly_hours WHERE specialist_id = @specialist_id
ORDER BY weekday, start_local;

-- name: OverrideListBySpecialist :many
SELECT id, day, closed,
       coalesce((extract(epoch FROM start_local) / 60)::integer, 0)::integer AS start_min,
       coalesce((extract(epoch FROM end_local) / 60)::integer, 0)::integer AS end_min,
       note
FROM overrides WHERE specialist_id = @specialist_id AND day >= @from_day::date
ORDER BY day, start_local;

-- name: OverrideListByClinicRange :many
SELECT o.id, o.specialist_id, o.day, o.closed,
       coalesce((extract(epoch FROM o.start_local) / 60)::integer, 0)::integer AS start_min,
       coalesce((extract(epoch FROM o.end_local) / 60)::integer, 0)::integer AS end_min,
       o.note
FROM overrides o WHERE o.clinic_id = @clinic_id AND o.day BETWEEN @from_day::date AND @to_day::date
ORDER BY o.day, o.specialist_id, o.start_local;

-- name: OverrideInsert :one
INSERT INTO overrides (clinic_id, specialist_id, day, closed, start_local, end_local, note)
VALUES (@clinic_id, @specialist_id, @day, @closed,
        CASE WHEN @closed::boolean THEN NULL ELSE make_interval(mins => @start_min::integer)::time END,
        CASE WHEN @closed::boolean THEN NULL WHEN @end_min::integer = 1440 THEN '24:00'::time ELSE make_interval(mins => @end_min::integer)::time END,
        @note)
RETURNING id;

-- name: OverrideGet :one
SELECT * FROM overrides WHERE id = @id AND clinic_id = @clinic_id;

-- name: OverrideDelete :execrows
DELETE FROM overrides WHERE id = @id AND clinic_id = @clinic_id;
