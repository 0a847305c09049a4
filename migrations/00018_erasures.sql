-- +goose Up
-- The ledger of erasures, as this database keeps it: which identities of
-- a clinic were erased and when, each only as a keyed hash (HMAC-SHA256
-- of its identity key, internal/identity) so that nothing here names a
-- patient. The same entries are appended to a file outside the database
-- (ERASURE_LEDGER): a backup restored from before an erasure lacks its
-- row here, and the file's entry, missing from this table, is applied
-- again at the next start. key_id names the HMAC key an entry was made
-- with (a hash of it), so an entry of another key is told apart.
CREATE TABLE erasures (
    id         uuid PRIMARY KEY,
    clinic_id  uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    email_mac  text NOT NULL DEFAULT '',
    phone_mac  text NOT NULL DEFAULT '',
    key_id     text NOT NULL,
    erased_at  timestamptz NOT NULL,
    CHECK (email_mac <> '' OR phone_mac <> '')
);

-- +goose Down
DROP TABLE erasures;
