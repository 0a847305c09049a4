-- name: MessageInsert :batchexec
INSERT INTO messages (id, clinic_id, booking_id, kind, recipient, language, previous_id, reason, send_at, job_id, entry_id, offer_id, cause)
VALUES (@id, @clinic_id, @booking_id, @kind, @recipient, @language, @previous_id, @reason, @send_at, @job_id, @entry_id, @offer_id, @cause);

-- name: MessageDelete :exec
DELETE FROM messages WHERE id = @id;

-- name: MessageGet :one
SELECT * FROM messages WHERE id = @id;

-- name: MessageStart :one
-- An attempt begins: counted before the mail server is spoken to. No row
-- when the message is no longer to be sent (sent, failed or cancelled).
UPDATE messages
SET status = 'sending', attempts = attempts + 1, updated_at = now()
WHERE id = @id AND status IN ('queued', 'retrying', 'sending')
RETURNING *;

-- name: MessageAccepted :exec
-- The mail server took the message: from here on it is never sent again.
UPDATE messages
SET status = 'sent', accepted_at = now(), last_error = '', updated_at = now()
WHERE id = @id;

-- name: MessageAttemptFailed :exec
UPDATE messages
SET status = @status, last_error = @last_error, updated_at = now()
WHERE id = @id AND status = 'sending';

-- name: MessageCapLock :exec
-- Serialises the cap's count and place for one recipient across every
-- worker of every process, to the end of the transaction.
SELECT pg_advisory_xact_lock(1835100268, hashtext(@recipient_key::text));

-- name: MessageCapCount :one
-- The places a recipient's public messages took since @since: at the
-- clinic, and across the server. A message the mail server refused for
-- good reached nobody and gives its place back.
SELECT count(*) FILTER (WHERE clinic_id = @clinic_id)::int AS clinic, count(*)::int AS server
FROM messages
WHERE recipient_key = @recipient_key::text AND counted_at > @since::timestamptz AND status <> 'failed';

-- name: MessageCapTake :exec
-- A public message takes its place under its recipient's cap; a retry
-- keeps it.
UPDATE messages SET recipient_key = @recipient_key::text, counted_at = @counted_at::timestamptz, updated_at = now()
WHERE id = @id;

-- name: MessageHold :exec
-- Past the cap: not sent, not retried, kept for staff with its reason.
UPDATE messages SET status = 'held', last_error = @reason, updated_at = now()
WHERE id = @id AND status = 'sending';

-- name: MessageListHeld :many
-- A clinic's messages held back in the last days, newest first.
SELECT id, booking_id, kind, recipient, last_error, updated_at FROM messages
WHERE clinic_id = @clinic_id AND status = 'held' AND updated_at > @since
ORDER BY updated_at DESC
LIMIT 100;

-- name: MessageHeldExists :one
SELECT EXISTS (
    SELECT 1 FROM messages WHERE clinic_id = @clinic_id AND status = 'held' AND updated_at > @since
) AS held;

-- name: MessageCancel :exec
-- A message that need not go out any more (a reminder of a booking that
-- moved or was cancelled, a list with nothing in it).
UPDATE messages SET status = 'cancelled', updated_at = now()
WHERE id = @id AND status IN ('queued', 'retrying', 'sending');

-- name: MessageCancelPending :many
-- The messages of a booking that is cancelled or moved which have not gone
-- out yet (its reminder; a confirmation or change notice a mail server
-- deferred), cancelled: they would tell of a time no longer booked. Their
-- jobs are cancelled by the caller in the same transaction.
UPDATE messages SET status = 'cancelled', updated_at = now()
WHERE booking_id = @booking_id AND kind IN ('confirmation', 'reminder', 'change') AND status IN ('queued', 'retrying')
RETURNING job_id;

-- name: MessageListByBooking :many
-- What was sent about a booking: its own messages, and the change notice
-- of its move to a new time.
SELECT * FROM messages
WHERE clinic_id = @clinic_id AND (booking_id = @booking_id OR previous_id = @booking_id)
ORDER BY created_at, send_at;

-- name: MessageBacklog :one
-- Messages due and not yet accepted or given up: how many, and since when
-- the oldest has waited.
SELECT count(*)::bigint AS waiting, coalesce(min(send_at), now())::timestamptz AS oldest
FROM messages
WHERE status IN ('queued', 'retrying', 'sending') AND send_at <= now();

-- name: BookingUpcomingByEmail :many
-- A patient's coming bookings at a clinic, for the list they asked for by
-- e-mail address.
SELECT sqlc.embed(b), t.name AS type_name, t.translations AS type_translations, s.name AS specialist_name
FROM bookings b
JOIN appointment_types t ON t.id = b.appointment_type_id
JOIN specialists s ON s.id = b.specialist_id
WHERE b.clinic_id = @clinic_id AND b.status = 'confirmed' AND b.slot_start > @after
  -- ASCII case only: no other letter folds into an address's.
  AND lower(b.patient_email COLLATE "C") = lower(sqlc.arg(email)::text COLLATE "C")
ORDER BY b.slot_start
LIMIT 20;

-- name: OutboxCopyInsert :exec
INSERT INTO outbox_copies (message_id, clinic_id, recipient, subject, raw)
VALUES (@message_id, @clinic_id, @recipient, @subject, @raw)
ON CONFLICT (message_id, clinic_id) DO NOTHING;

-- name: OutboxCopyList :many
SELECT message_id, recipient, subject, created_at FROM outbox_copies
WHERE clinic_id = @clinic_id
ORDER BY created_at DESC
LIMIT 100;

-- name: OutboxCopyGet :one
SELECT * FROM outbox_copies WHERE message_id = @message_id AND clinic_id = @clinic_id;

-- name: MessageBookingContext :one
-- A booking with what its e-mails name: clinic, type and specialist.
SELECT sqlc.embed(b), sqlc.embed(c), t.name AS type_name, t.translations AS type_translations, s.name AS specialist_name
FROM bookings b
JOIN clinics c ON c.id = b.clinic_id
JOIN appointment_types t ON t.id = b.appointment_type_id
JOIN specialists s ON s.id = b.specialist_id
WHERE b.id = @id;

-- name: MessageRelease :one
-- Staff send a held-back message anyway: it goes back to the queue as
-- staff's own, never counted or held back again.
UPDATE messages
SET status = 'queued', cause = 'staff', last_error = '', send_at = @send_at, updated_at = now()
WHERE id = @id AND clinic_id = @clinic_id AND status = 'held'
RETURNING id;

-- name: MessageSetJob :exec
UPDATE messages SET job_id = @job_id WHERE id = @id;
