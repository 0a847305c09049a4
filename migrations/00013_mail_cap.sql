-- +goose Up
-- A cap on the e-mails strangers can make the clinic send to one address.
--
-- cause says who made a message: 'public', a request anyone may make (an
-- online booking, cancel or move, a lookup, a waitlist join), which counts
-- toward its recipient's daily cap and is held back past it; 'staff', a
-- staff member's change; 'schedule', the system's own timing (reminders,
-- waitlist offers). Neither of the last two is counted or held back.
-- Messages written before the cap existed were promised without it: they
-- are 'staff'. New rows must say (the default is the cautious one).
ALTER TABLE messages ADD COLUMN cause text NOT NULL DEFAULT 'staff'
    CHECK (cause IN ('public', 'staff', 'schedule'));
ALTER TABLE messages ALTER COLUMN cause SET DEFAULT 'public';

-- A public message that took its place under the cap: the key its
-- recipient is compared by, and when. The places taken in the last day
-- are what the cap counts, per clinic and across the server.
ALTER TABLE messages
    ADD COLUMN recipient_key text,
    ADD COLUMN counted_at timestamptz;
CREATE INDEX messages_counted ON messages (recipient_key, counted_at) WHERE counted_at IS NOT NULL;

-- 'held': past the cap, not sent and not retried; staff see it, with its
-- reason in last_error.
ALTER TABLE messages DROP CONSTRAINT messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
    CHECK (status IN ('queued', 'sending', 'sent', 'retrying', 'failed', 'cancelled', 'held'));
CREATE INDEX messages_held ON messages (clinic_id, updated_at DESC) WHERE status = 'held';

-- +goose Down
DROP INDEX messages_held;
UPDATE messages SET status = 'cancelled' WHERE status = 'held';
ALTER TABLE messages DROP CONSTRAINT messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
    CHECK (status IN ('queued', 'sending', 'sent', 'retrying', 'failed', 'cancelled'));
DROP INDEX messages_counted;
ALTER TABLE messages DROP COLUMN counted_at, DROP COLUMN recipient_key, DROP COLUMN cause;
