-- name: WaitlistMailContext :one
-- What a waitlist e-mail tells: the entry with its type, the specialist it
-- waits for (or none), its clinic, and for an offer's e-mail the offer with
-- its time and that time's specialist. The offer's columns are empty when
-- no offer (of this entry) is named.
SELECT sqlc.embed(e), sqlc.embed(c), t.name AS type_name, t.translations AS type_translations,
       COALESCE(es.name, '') AS entry_specialist_name,
       COALESCE(o.state, '') AS offer_state,
       o.expires_at AS offer_expires_at,
       op.slot_start AS offer_start, op.slot_end AS offer_end,
       COALESCE(os.name, '') AS offer_specialist_name
FROM waitlist_entries e
JOIN clinics c ON c.id = e.clinic_id
JOIN appointment_types t ON t.id = e.appointment_type_id
LEFT JOIN specialists es ON es.id = e.specialist_id
LEFT JOIN waitlist_offers o ON o.id = sqlc.narg(offer_id) AND o.entry_id = e.id
LEFT JOIN waitlist_openings op ON op.id = o.opening_id
LEFT JOIN specialists os ON os.id = op.specialist_id
WHERE e.id = @entry_id AND e.clinic_id = @clinic_id;
