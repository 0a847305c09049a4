-- The day grid's working hours: every weekly range of a clinic at once.
-- Times travel as minutes from local midnight (24:00 = 1440).

-- name: WeeklyHoursListByClinic :many
SELECT specialist_id, weekday,
       (extract(epoch FROM start_local) / 60)::integer AS start_min,
       (extract(epoch FROM end_local) / 60)::integer AS end_min
FROM weekly_hours WHERE clinic_id = @clinic_id
ORDER BY specialist_id, weekday, start_local;
