-- name: WaitlistStaffEntry :one
-- One entry of the clinic's list for staff (waiting, or with a time
-- offered), with the columns of WaitlistEntriesByClinic, wherever it
-- stands in the list.
SELECT sqlc.embed(e), t.name AS type_name, COALESCE(s.name, '') AS specialist_name,
       COALESCE(o.id, '00000000-0000-0000-0000-000000000000'::uuid) AS offer_id,
       o.expires_at AS offer_expires_at, op.slot_start AS offer_start
FROM waitlist_entries e
JOIN appointment_types t ON t.id = e.appointment_type_id
LEFT JOIN specialists s ON s.id = e.specialist_id
LEFT JOIN waitlist_offers o ON o.entry_id = e.id AND o.state = 'open'
LEFT JOIN waitlist_openings op ON op.id = o.opening_id
WHERE e.id = @id AND e.clinic_id = @clinic_id AND e.state IN ('waiting', 'offered');
