-- name: OutboxCopySearch :many
-- A page of the clinic's kept messages, newest first: those to an address
-- holding @recipient (when not empty), of the kind @kind (when not
-- empty), about the booking @booking_id (when given). One row more than
-- a page is asked for, to tell whether another page follows.
SELECT o.message_id, o.recipient, o.subject, o.created_at, m.kind, m.booking_id
FROM outbox_copies o
JOIN messages m ON m.id = o.message_id
WHERE o.clinic_id = @clinic_id
  AND (@recipient::text = '' OR o.recipient ILIKE '%' || @recipient::text || '%')
  AND (@kind::text = '' OR m.kind = @kind::text)
  AND (sqlc.narg(booking_id)::uuid IS NULL OR m.booking_id = sqlc.narg(booking_id)::uuid)
ORDER BY o.created_at DESC, o.message_id DESC
LIMIT @max_rows OFFSET @skip_rows;
