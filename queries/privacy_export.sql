-- name: PrivacyExportWaitlist :many
-- Every waitlist place of one patient at a clinic, in any state: those
-- whose e-mail key or phone key is the patient's (an empty key matches
-- nothing), oldest first.
SELECT * FROM waitlist_entries
WHERE clinic_id = sqlc.arg(clinic_id)
  AND ((sqlc.arg(email_key)::text <> '' AND patient_email_key = sqlc.arg(email_key)::text)
    OR (sqlc.arg(phone_key)::text <> '' AND patient_phone_key = sqlc.arg(phone_key)::text))
ORDER BY joined_at, id;

-- name: PrivacyExportOffers :many
-- The times offered to these waitlist places, with the freed time each
-- offer was of. Only the offers made to these places: an opening is
-- offered to other places too, whose offers are not read.
SELECT o.id, o.entry_id, o.state, o.offered_at, o.expires_at, o.ended_at, o.booking_id,
       p.appointment_type_id, p.specialist_id, p.slot_start, p.slot_end
FROM waitlist_offers o
JOIN waitlist_openings p ON p.id = o.opening_id
WHERE o.entry_id = ANY(sqlc.arg(entry_ids)::uuid[])
ORDER BY o.offered_at, o.id;

-- name: PrivacyExportMessages :many
-- The e-mails about these bookings and waitlist places, and the lists of
-- bookings asked for by e-mail (kind lookup, about no booking) whose
-- recipient may be the patient's address: counted under the patient's
-- key, or not counted yet (the caller compares those addresses' keys).
-- A message that also names a booking or place outside the sets (a
-- change notice whose booking is not among them) is left out. Each with
-- the copy kept of it when the server sends without a mail server.
SELECT m.id, m.booking_id, m.entry_id, m.kind, m.recipient, m.language, m.status,
       m.send_at, m.accepted_at, m.created_at, m.updated_at, m.attempts,
       c.subject AS copy_subject, c.raw AS copy_raw
FROM messages m
LEFT JOIN outbox_copies c ON c.message_id = m.id AND c.clinic_id = m.clinic_id
WHERE m.clinic_id = sqlc.arg(clinic_id)
  AND (m.booking_id IS NULL OR m.booking_id = ANY(sqlc.arg(booking_ids)::uuid[]))
  AND (m.entry_id IS NULL OR m.entry_id = ANY(sqlc.arg(entry_ids)::uuid[]))
  AND (m.booking_id IS NOT NULL OR m.entry_id IS NOT NULL
    OR (m.kind = 'lookup' AND sqlc.arg(email_key)::text <> ''
        AND (m.recipient_key = sqlc.arg(email_key)::text OR m.recipient_key IS NULL)))
ORDER BY m.created_at, m.send_at, m.id;

-- name: PrivacyExportAudit :many
-- The audit rows about these bookings, waitlist places and messages,
-- oldest first, with the name and role of the staff member who acted
-- (none for the patient, the system or the command line). The rows'
-- before and after images are not read: a move's holds the booking it
-- moved to, and the export says what it holds from the rows it reads.
SELECT a.id, a.actor, a.action, a.entity, a.entity_id, a.reason, a.at,
       s.name AS staff_name, s.role AS staff_role
FROM audit_log a
LEFT JOIN staff_users s
  ON a.actor LIKE 'staff:%' AND s.email = substr(a.actor, 7) AND s.clinic_id = a.clinic_id
WHERE a.clinic_id = sqlc.arg(clinic_id)
  AND ((a.entity = 'booking' AND a.entity_id = ANY(sqlc.arg(booking_ids)::text[]))
    OR (a.entity = 'waitlist_entry' AND a.entity_id = ANY(sqlc.arg(entry_ids)::text[]))
    OR (a.entity = 'message' AND a.entity_id = ANY(sqlc.arg(message_ids)::text[])))
ORDER BY a.at, a.id;
