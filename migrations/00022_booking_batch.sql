-- A new booking is written in one batch that ends with its COMMIT: its
-- e-mails' rows first, then the insert that takes the specialist's lock,
-- so that the lock is held for that one round trip only. The rows name a
-- booking that their statements do not see yet: the reference is checked
-- at the commit, when the booking is there (or the commit fails, and
-- everything goes).

-- +goose Up
ALTER TABLE messages ALTER CONSTRAINT messages_booking_id_fkey DEFERRABLE INITIALLY DEFERRED;

-- booking_written fails the transaction unless the booking is there: the
-- batch's last statement before its COMMIT, so that a booking its insert
-- did not write (the slot taken, a check failed) commits nothing of what
-- the batch wrote for it, whether or not a deferred reference would.
-- +goose StatementBegin
CREATE FUNCTION booking_written(booking uuid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM bookings WHERE id = booking) THEN
        RAISE EXCEPTION 'booking % was not written', booking USING ERRCODE = 'no_data_found';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION booking_written(uuid);
ALTER TABLE messages ALTER CONSTRAINT messages_booking_id_fkey NOT DEFERRABLE;
