-- +goose Up
-- When a clinic asks a patient booking online for the code it e-mails
-- them, proof that the address is theirs: never (bookings past an
-- address's allowance are then refused), only past the allowance of
-- unverified bookings per client address, or always. Staff bookings
-- never ask.
ALTER TABLE clinics
    ADD COLUMN verification text NOT NULL DEFAULT 'past_allowance'
        CHECK (verification IN ('never', 'past_allowance', 'always'));

-- +goose Down
ALTER TABLE clinics DROP COLUMN verification;
