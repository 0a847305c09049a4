-- +goose Up
-- A place on the waitlist counts once its patient confirmed it from the
-- link e-mailed to them: anyone can type an address into the form, only
-- its owner can press the button its e-mail leads to. An unconfirmed place
-- (confirmed_at null) is never offered a time. Places already on the list
-- count as confirmed: they were taken under the old rules, and their
-- patients were promised offers.
ALTER TABLE waitlist_entries
    ADD COLUMN confirmed_at timestamptz,
    -- Where the place stands in its type's list: when it joined, or when
    -- it last passed a time on (it then goes to the end).
    ADD COLUMN queued_at timestamptz;
UPDATE waitlist_entries SET confirmed_at = now(), queued_at = joined_at;
ALTER TABLE waitlist_entries ALTER COLUMN queued_at SET NOT NULL, ALTER COLUMN queued_at SET DEFAULT now();

DROP INDEX waitlist_waiting;
CREATE INDEX waitlist_waiting ON waitlist_entries (appointment_type_id, queued_at)
    WHERE state = 'waiting' AND confirmed_at IS NOT NULL;
-- The sweep's search for places never confirmed.
CREATE INDEX waitlist_unconfirmed ON waitlist_entries (joined_at)
    WHERE state = 'waiting' AND confirmed_at IS NULL;

-- A link the outbox put in an e-mail (mailed) can confirm its place; the
-- link shown once to whoever joined cannot, or a script would confirm the
-- places it invents.
ALTER TABLE waitlist_links ADD COLUMN mailed boolean NOT NULL DEFAULT false;

-- +goose Down
-- The list before knows no unconfirmed places: rather than offer times to
-- addresses nobody proved, those places end.
UPDATE waitlist_entries SET state = 'lapsed', ended_at = now()
WHERE confirmed_at IS NULL AND state IN ('waiting', 'offered');
ALTER TABLE waitlist_links DROP COLUMN mailed;
DROP INDEX waitlist_unconfirmed;
DROP INDEX waitlist_waiting;
CREATE INDEX waitlist_waiting ON waitlist_entries (appointment_type_id, joined_at) WHERE state = 'waiting';
ALTER TABLE waitlist_entries DROP COLUMN queued_at, DROP COLUMN confirmed_at;
