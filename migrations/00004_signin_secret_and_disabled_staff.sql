-- +goose Up
-- The server's secret signs the sign-in form's CSRF token and the device
-- cookie of a browser that signed in. Made once by the first instance to
-- start (INSERT ... ON CONFLICT DO NOTHING), then read by every instance,
-- unless SECRET_KEY is set.
CREATE TABLE server_secrets (
    name       text PRIMARY KEY,
    value      bytea NOT NULL CHECK (length(value) >= 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A disabled account cannot sign in, and its open sessions and streams end.
ALTER TABLE staff_users ADD COLUMN disabled_at timestamptz;

-- +goose Down
ALTER TABLE staff_users DROP COLUMN disabled_at;
DROP TABLE server_secrets;
