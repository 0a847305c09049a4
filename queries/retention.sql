-- The daily retention run (internal/privacy/retention.go): what each
-- clinic's periods leave behind, found and removed a clinic at a time.

-- name: RetentionClinics :many
-- The clinics to run, with their periods' ends as of @now in their own
-- zone (a month back from the 31st is the last day of the shorter month),
-- and their today. A null @slug is every clinic.
SELECT c.id, c.slug, c.retention_months, c.mail_retention_days,
       (((sqlc.arg(now)::timestamptz AT TIME ZONE c.timezone) - make_interval(months => c.retention_months))
           AT TIME ZONE c.timezone)::timestamptz AS booking_cutoff,
       (sqlc.arg(now)::timestamptz - make_interval(days => c.mail_retention_days))::timestamptz AS mail_cutoff,
       (sqlc.arg(now)::timestamptz AT TIME ZONE c.timezone)::date AS today
FROM clinics c
WHERE sqlc.narg(slug)::text IS NULL OR c.slug = sqlc.narg(slug)::text
ORDER BY c.slug;

-- name: RetentionDueBookings :many
-- Bookings of the clinic that ended before @cutoff and still have their
-- patient's details, oldest first, @max at a time.
SELECT id FROM bookings
WHERE clinic_id = @clinic_id AND anonymised_at IS NULL AND slot_end < sqlc.arg(cutoff)::timestamptz
ORDER BY slot_end, id
LIMIT sqlc.arg(max)::int;

-- name: RetentionCopiesDelete :execrows
-- Stored e-mails of the clinic made before @cutoff.
DELETE FROM outbox_copies WHERE clinic_id = @clinic_id AND created_at < sqlc.arg(cutoff)::timestamptz;

-- name: RetentionMessageErrorsClear :execrows
-- The mail server's answers to finished messages (which may quote the
-- address) once the period has passed; the message itself stays with its
-- booking.
UPDATE messages SET last_error = ''
WHERE clinic_id = @clinic_id AND last_error <> '' AND status IN ('sent', 'failed', 'cancelled')
  AND updated_at < sqlc.arg(cutoff)::timestamptz;

-- name: RetentionLooseMessagesDelete :execrows
-- Messages about no booking and no waitlist place (the lists of bookings
-- sent on request) hold only their recipient: they go with the period,
-- once done with.
DELETE FROM messages
WHERE clinic_id = @clinic_id AND booking_id IS NULL AND previous_id IS NULL AND entry_id IS NULL AND offer_id IS NULL
  AND status IN ('sent', 'failed', 'cancelled', 'held') AND updated_at < sqlc.arg(cutoff)::timestamptz;

-- name: RetentionPlaceCopiesDelete :execrows
-- The stored e-mails of the places RetentionPlacesDelete deletes.
DELETE FROM outbox_copies oc
USING messages m, waitlist_entries e
WHERE oc.message_id = m.id AND m.entry_id = e.id
  AND e.clinic_id = @clinic_id AND e.to_date < sqlc.arg(today)::date AND e.state <> 'offered';

-- name: RetentionPlaceMessagesDelete :execrows
DELETE FROM messages m
USING waitlist_entries e
WHERE m.entry_id = e.id
  AND e.clinic_id = @clinic_id AND e.to_date < sqlc.arg(today)::date AND e.state <> 'offered';

-- name: RetentionPlacesDelete :execrows
-- Waitlist places whose last day has passed in the clinic's zone, ended
-- or not (a place still waiting ends here; one with a time offered waits
-- for the offer's end, minutes away). Their links and offers go with them.
DELETE FROM waitlist_entries
WHERE clinic_id = @clinic_id AND to_date < sqlc.arg(today)::date AND state <> 'offered';

-- name: RetentionSessionsDelete :execrows
-- Expired sessions (each server also removes them every half hour).
DELETE FROM sessions WHERE expiry < sqlc.arg(now)::timestamptz;
