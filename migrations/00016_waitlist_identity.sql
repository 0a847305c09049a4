-- +goose Up
-- A waitlist place carries the identity keys of its patient's e-mail
-- address and phone number (internal/identity), set by the application
-- when the place is taken, so that the offer's match passes over a
-- patient who booked the type meanwhile under any spelling of the same
-- address or number, as the booking gate would refuse them.
ALTER TABLE waitlist_entries
    ADD COLUMN patient_email_key text NOT NULL DEFAULT '',
    ADD COLUMN patient_phone_key text NOT NULL DEFAULT '';

-- The places taken so far, keyed as bookings' were when their keys came
-- in: NFKC, lower case, no +tag, Gmail's dots and its second domain;
-- phone numbers in E.164, read in the clinic's country when written
-- without a country code (+49 for Germany, the only country until now).
WITH spelled AS (
    SELECT e.id, lower(normalize(btrim(e.patient_email), NFKC)) AS e,
           regexp_replace(btrim(e.patient_phone), '\(0\)', '', 'g') AS p
    FROM waitlist_entries e
), parts AS (
    SELECT id,
           regexp_replace(substring(e FROM '^(.*)@'), '^([^+]+)\+.*$', '\1') AS local,
           CASE rtrim(substring(e FROM '@([^@]*)$'), '.')
               WHEN 'googlemail.com' THEN 'gmail.com'
               ELSE rtrim(substring(e FROM '@([^@]*)$'), '.') END AS domain,
           e,
           p,
           regexp_replace(p, '\D', '', 'g') AS digits
    FROM spelled
)
UPDATE waitlist_entries w
SET patient_email_key = CASE
        WHEN parts.domain IS NULL THEN parts.e
        WHEN parts.domain = 'gmail.com' THEN replace(parts.local, '.', '') || '@gmail.com'
        ELSE parts.local || '@' || parts.domain END,
    patient_phone_key = CASE
        WHEN parts.digits = '' THEN ''
        WHEN parts.p LIKE '+%' THEN '+' || parts.digits
        WHEN parts.digits LIKE '00%' THEN '+' || substr(parts.digits, 3)
        WHEN parts.digits LIKE '0%' THEN '+49' || substr(parts.digits, 2)
        ELSE '+49' || parts.digits END
FROM parts
WHERE parts.id = w.id;

-- +goose Down
ALTER TABLE waitlist_entries DROP COLUMN patient_phone_key, DROP COLUMN patient_email_key;
