-- name: WaitlistOffersOpenByClinic :many
-- A clinic's standing offers with the freed time each offers, for a check
-- of them after the clinic's set-up changed.
SELECT o.id, o.entry_id, sqlc.embed(op)
FROM waitlist_offers o
JOIN waitlist_openings op ON op.id = o.opening_id
WHERE op.clinic_id = @clinic_id AND o.state = 'open' AND op.state = 'open';
