-- name: WaitlistEntryInsert :one
INSERT INTO waitlist_entries (
    id, clinic_id, appointment_type_id, specialist_id, from_date, to_date, times,
    patient_name, patient_email, patient_phone, patient_email_key, patient_phone_key,
    language, client_id, joined_at, queued_at
) VALUES (
    @id, @clinic_id, @appointment_type_id, @specialist_id, @from_date, @to_date, @times,
    @patient_name, @patient_email, @patient_phone, @patient_email_key, @patient_phone_key,
    @language, @client_id, @joined_at, @joined_at
)
RETURNING *;

-- name: WaitlistLinkAdd :exec
-- A link to an entry's page; mailed when it goes out in an e-mail (only
-- such a link confirms the place). It takes its entry's clinic; an entry
-- that does not exist leaves it NULL, which the column refuses.
INSERT INTO waitlist_links (token_hash, entry_id, offer_id, mailed, clinic_id)
VALUES (@token_hash, @entry_id, @offer_id, @mailed, (SELECT e.clinic_id FROM waitlist_entries e WHERE e.id = @entry_id));

-- name: WaitlistByLink :one
-- The entry a link opens, its offer if the link is an offer's, whether
-- the link came by e-mail, and where the entry stands: how many confirmed
-- places for the same type stand before it.
SELECT sqlc.embed(e), l.offer_id, l.mailed,
       t.name AS type_name, t.translations AS type_translations, COALESCE(s.name, '') AS specialist_name,
       (SELECT count(*) FROM waitlist_entries o
         WHERE o.appointment_type_id = e.appointment_type_id AND o.state IN ('waiting', 'offered')
           AND o.confirmed_at IS NOT NULL AND o.queued_at < e.queued_at)::int AS ahead
FROM waitlist_links l
JOIN waitlist_entries e ON e.id = l.entry_id
JOIN appointment_types t ON t.id = e.appointment_type_id
LEFT JOIN specialists s ON s.id = e.specialist_id
WHERE l.token_hash = @token_hash;

-- name: WaitlistEntryGetForUpdate :one
SELECT * FROM waitlist_entries WHERE id = @id FOR NO KEY UPDATE;

-- name: WaitlistEntryEnd :one
-- An entry leaves the list (left, removed, lapsed or booked); no row when
-- it had already.
UPDATE waitlist_entries
SET state = @state, ended_at = @ended_at, booking_id = sqlc.narg(booking_id)
WHERE id = @id AND state IN ('waiting', 'offered')
RETURNING *;

-- name: WaitlistEntrySetState :exec
UPDATE waitlist_entries SET state = @state WHERE id = @id;

-- name: WaitlistEntryConfirm :one
-- A place still on the list is confirmed; no row when it was already, or
-- has ended.
UPDATE waitlist_entries SET confirmed_at = @confirmed_at
WHERE id = @id AND confirmed_at IS NULL AND state IN ('waiting', 'offered')
RETURNING *;

-- name: WaitlistEntryRequeue :exec
-- An entry that passed a time on waits again, at the end of its list.
UPDATE waitlist_entries SET state = 'waiting', queued_at = @queued_at WHERE id = @id AND state IN ('waiting', 'offered');

-- name: WaitlistEntriesByClinic :many
-- The clinic's list for staff: who waits (and who has an offer), in the
-- list's order, optionally for one type and for entries whose days include a day.
SELECT sqlc.embed(e), t.name AS type_name, COALESCE(s.name, '') AS specialist_name,
       COALESCE(o.id, '00000000-0000-0000-0000-000000000000'::uuid) AS offer_id,
       o.expires_at AS offer_expires_at, op.slot_start AS offer_start
FROM waitlist_entries e
JOIN appointment_types t ON t.id = e.appointment_type_id
LEFT JOIN specialists s ON s.id = e.specialist_id
LEFT JOIN waitlist_offers o ON o.entry_id = e.id AND o.state = 'open'
LEFT JOIN waitlist_openings op ON op.id = o.opening_id
WHERE e.clinic_id = @clinic_id AND e.state IN ('waiting', 'offered')
  AND (sqlc.narg(appointment_type_id)::uuid IS NULL OR e.appointment_type_id = sqlc.narg(appointment_type_id))
  AND (sqlc.narg(day)::date IS NULL OR sqlc.narg(day)::date BETWEEN e.from_date AND e.to_date)
ORDER BY e.queued_at, e.id
LIMIT 500;

-- name: WaitlistCountByDay :many
-- How many wait for each of a range of days, for the staff calendar
-- (confirmed places only: the others are offered nothing).
SELECT d::date AS day, count(e.id)::int AS waiting
FROM generate_series(@from_day::date, @to_day::date, interval '1 day') d
JOIN waitlist_entries e ON e.clinic_id = @clinic_id AND e.state IN ('waiting', 'offered') AND e.confirmed_at IS NOT NULL
  AND d::date BETWEEN e.from_date AND e.to_date
GROUP BY d
ORDER BY d;

-- name: WaitlistMatching :one
-- Whether anyone waits for a time: the first confirmed waiting entry, in
-- the list's order (queued_at: joining, or the last time passed on), for
-- its type, with its specialist or none named, whose days hold the
-- time's day and whose times of day (if any) hold its start, in the
-- clinic's zone (the parts' boundaries are given, from the waitlist's one
-- rule for them); who has not been offered this opening already; and who
-- has not booked the type meanwhile within its cooldown (the booking gate
-- would refuse them the time, which would be held for nothing). The
-- cooldown is BookingPatientCooldownUntil's condition (same type, the
-- same e-mail key or phone key, booked within cooldown_min, or cancelled
-- online less than cancel_keeps_sec ago), judged at the database's
-- now(), when the offer is made; the gate judges
-- it at the Accept, later, when a cooldown can only have run further. So
-- nobody offered is refused for it (unless they book the type again
-- meanwhile), while a patient whose cooldown would end during the offer
-- is passed over. Locked, skipping an entry another transaction is
-- offering a time to (a NO KEY lock: rows that only refer to the entry, a
-- link or a message being written, do not make it look taken).
SELECT e.*
FROM waitlist_entries e
JOIN clinics c ON c.id = e.clinic_id
WHERE e.appointment_type_id = @appointment_type_id AND e.state = 'waiting' AND e.confirmed_at IS NOT NULL
  AND (e.specialist_id IS NULL OR e.specialist_id = @specialist_id)
  AND (sqlc.arg(slot_start)::timestamptz AT TIME ZONE c.timezone)::date BETWEEN e.from_date AND e.to_date
  AND (cardinality(e.times) = 0 OR
       CASE WHEN extract(hour FROM sqlc.arg(slot_start)::timestamptz AT TIME ZONE c.timezone) < sqlc.arg(afternoon_from_hour)::int THEN 'morning'
            WHEN extract(hour FROM sqlc.arg(slot_start)::timestamptz AT TIME ZONE c.timezone) < sqlc.arg(evening_from_hour)::int THEN 'afternoon'
            ELSE 'evening' END = ANY (e.times))
  AND NOT EXISTS (SELECT 1 FROM waitlist_offers o WHERE o.entry_id = e.id AND o.opening_id = sqlc.narg(opening_id))
  AND NOT EXISTS (
    SELECT 1 FROM bookings b
    JOIN appointment_types t ON t.id = b.appointment_type_id
    WHERE b.appointment_type_id = e.appointment_type_id AND t.cooldown_min > 0
      AND (b.status = 'confirmed'
           OR (b.cancelled_online AND b.cancelled_at > now() - make_interval(secs => sqlc.arg(cancel_keeps_sec)::int)))
      AND b.created_at > now() - make_interval(mins => t.cooldown_min)
      AND (b.patient_email_key = e.patient_email_key
           OR (e.patient_phone_key <> '' AND b.patient_phone_key = e.patient_phone_key)))
ORDER BY e.queued_at, e.id
LIMIT 1
FOR NO KEY UPDATE OF e SKIP LOCKED;

-- name: WaitlistOpeningInsert :execrows
-- A freed time becomes an opening, unless one is open for it already.
INSERT INTO waitlist_openings (id, clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, cause, freed_at, hold_id)
VALUES (@id, @clinic_id, @appointment_type_id, @specialist_id, @slot_start, @slot_end, @cause, @freed_at, @hold_id)
ON CONFLICT (specialist_id, slot_start, clinic_id) WHERE state = 'open' DO NOTHING;

-- name: WaitlistOpeningGetForUpdate :one
SELECT * FROM waitlist_openings WHERE id = @id FOR NO KEY UPDATE;

-- name: WaitlistOpeningClose :exec
UPDATE waitlist_openings SET state = @state, closed_at = @closed_at WHERE id = @id AND state = 'open';

-- name: WaitlistOfferInsert :exec
INSERT INTO waitlist_offers (id, opening_id, entry_id, offered_at, expires_at, clinic_id)
SELECT @id, op.id, @entry_id, @offered_at, @expires_at, op.clinic_id FROM waitlist_openings op WHERE op.id = @opening_id;

-- name: WaitlistOfferSetNextJob :exec
UPDATE waitlist_offers SET next_job_id = @next_job_id WHERE id = @id;

-- name: WaitlistOfferOpen :one
-- The opening's live offer, if any.
SELECT * FROM waitlist_offers WHERE opening_id = @opening_id AND state = 'open';

-- name: WaitlistOfferOpenOfEntry :one
-- The entry's live offer, if any.
SELECT id FROM waitlist_offers WHERE entry_id = @entry_id AND state = 'open';

-- name: WaitlistOfferGetForUpdate :one
SELECT sqlc.embed(o), sqlc.embed(op)
FROM waitlist_offers o
JOIN waitlist_openings op ON op.id = o.opening_id
WHERE o.id = @id
FOR NO KEY UPDATE OF o;

-- name: WaitlistOfferGet :one
SELECT sqlc.embed(o), sqlc.embed(op)
FROM waitlist_offers o
JOIN waitlist_openings op ON op.id = o.opening_id
WHERE o.id = @id;

-- name: WaitlistOfferEnd :one
-- An open offer ends (accepted, declined, expired, withdrawn); no row
-- when it had already.
UPDATE waitlist_offers
SET state = @state, ended_at = @ended_at, booking_id = sqlc.narg(booking_id)
WHERE id = @id AND state = 'open'
RETURNING *;

-- name: WaitlistStats :one
-- The list's size now, for metrics: confirmed places waiting, places not
-- confirmed (yet), offers standing, freed times being offered.
SELECT
    (SELECT count(*) FROM waitlist_entries WHERE state = 'waiting' AND confirmed_at IS NOT NULL)::bigint AS waiting,
    (SELECT count(*) FROM waitlist_entries WHERE state = 'waiting' AND confirmed_at IS NULL)::bigint AS unconfirmed,
    (SELECT count(*) FROM waitlist_offers WHERE state = 'open')::bigint AS offered,
    (SELECT count(*) FROM waitlist_openings WHERE state = 'open')::bigint AS openings;

-- name: WaitlistTimeBooked :one
-- Whether a confirmed booking of the specialist overlaps a time (with the
-- type's buffers around it): such a time is not free to offer.
SELECT EXISTS (
    SELECT 1 FROM bookings
    WHERE specialist_id = @specialist_id AND status = 'confirmed'
      AND tstzrange(slot_start, slot_end, '[)') && tstzrange(sqlc.arg(from_time)::timestamptz, sqlc.arg(to_time)::timestamptz, '[)')
)::boolean AS booked;

-- name: WaitlistOpeningSetHold :exec
UPDATE waitlist_openings SET hold_id = @hold_id WHERE id = @id;

-- name: WaitlistOfferMailSent :one
-- Whether an offer's e-mail reached the mail server (or the development
-- outbox).
SELECT EXISTS (SELECT 1 FROM messages WHERE offer_id = @offer_id AND status = 'sent')::bool;

-- name: WaitlistOpeningsAdrift :many
-- Open openings that no job is moving on, as far as time can tell: an
-- offer that ran out before @expired_before, or no offer at all when the
-- time was freed, and any offer ended, before @quiet_since (a job that was
-- lost, or gave up). A null @clinic_id is every clinic.
SELECT op.id
FROM waitlist_openings op
LEFT JOIN waitlist_offers o ON o.opening_id = op.id AND o.state = 'open'
WHERE op.state = 'open'
  AND (sqlc.narg(clinic_id)::uuid IS NULL OR op.clinic_id = sqlc.narg(clinic_id))
  AND CASE WHEN o.id IS NOT NULL THEN o.expires_at < @expired_before
      ELSE op.freed_at < @quiet_since
           AND NOT EXISTS (SELECT 1 FROM waitlist_offers x WHERE x.opening_id = op.id AND x.ended_at >= @quiet_since)
      END
ORDER BY op.freed_at
LIMIT 100;

-- name: WaitlistLapsePast :execrows
-- Places whose last day is over in their clinic's zone leave the list. A
-- null @clinic_id is every clinic.
UPDATE waitlist_entries e SET state = 'lapsed', ended_at = sqlc.arg(now)::timestamptz
FROM clinics c
WHERE c.id = e.clinic_id AND e.state = 'waiting'
  AND (sqlc.narg(clinic_id)::uuid IS NULL OR e.clinic_id = sqlc.narg(clinic_id))
  AND e.to_date < (sqlc.arg(now)::timestamptz AT TIME ZONE c.timezone)::date;

-- name: WaitlistLapseUnconfirmed :execrows
-- Places not confirmed since before @joined_before leave the list. A null
-- @clinic_id is every clinic.
UPDATE waitlist_entries SET state = 'lapsed', ended_at = sqlc.arg(now)::timestamptz
WHERE state = 'waiting' AND confirmed_at IS NULL AND joined_at < @joined_before
  AND (sqlc.narg(clinic_id)::uuid IS NULL OR clinic_id = sqlc.narg(clinic_id));
