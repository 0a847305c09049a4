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
SELECT o.specialist_id, o.day, o.closed,
       coalesce((extract(epoch FROM o.start_local) / 60)::integer, 0)::integer AS start_min,
       coalesce((extract(epoch FROM o.end_local) / 60)::integer, 0)::integer AS end_min,
       o.note
FROM overrides o
JOIN appointment_type_specialists ats ON ats.specialist_id = o.specialist_id
WHERE ats.appointment_type_id = @appointment_type_id
  AND o.day BETWEEN @from_day::date AND @to_day::date
ORDER BY o.specialist_id, o.day, o.start_local;

-- name: OverrideInsertClosed :exec
INSERT INTO overrides (clinic_id, specialist_id, day, closed, note)
VALUES (@clinic_id, @specialist_id, @day, true, @note)
ON CONFLICT DO NOTHING;


-- name: WeeklyHoursCountBySpecialist :one
SELECT count(*) FROM weekly_hours WHERE specialist_id = @specialist_id;

-- name: OverrideCountBySpecialist :one
SELECT count(*) FROM overrides WHERE specialist_id = @specialist_id;
