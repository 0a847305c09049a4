-- +goose Up
-- A patient whose offered time was withdrawn (the day closed after the
-- offer went out) is told so, and that they keep their place.
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('confirmation', 'reminder', 'change', 'cancellation', 'lookup', 'waitlist_joined', 'waitlist_offer',
                    'series', 'series_cancellation', 'waitlist_withdrawn'));

-- +goose Down
DELETE FROM messages WHERE kind = 'waitlist_withdrawn';
ALTER TABLE messages DROP CONSTRAINT messages_kind_check;
ALTER TABLE messages ADD CONSTRAINT messages_kind_check
    CHECK (kind IN ('confirmation', 'reminder', 'change', 'cancellation', 'lookup', 'waitlist_joined', 'waitlist_offer',
                    'series', 'series_cancellation'));
