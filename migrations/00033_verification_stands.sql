-- An online booking is let through under the clinic's verification mode
-- as the server last read it, kept in memory: the booking's own
-- transaction checks that the mode still stands, so that a clinic that
-- starts asking every patient for a code is obeyed by the next booking
-- to commit, whatever a server remembers.

-- +goose Up
-- verification_stands fails the transaction unless the clinic's
-- verification mode is the one given.
-- +goose StatementBegin
CREATE FUNCTION verification_stands(clinic uuid, mode text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM clinics WHERE id = clinic AND verification = mode) THEN
        RAISE EXCEPTION 'the verification mode of clinic % is no longer %', clinic, mode
            USING ERRCODE = 'CV001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION verification_stands(uuid, text);
