-- A closure is a run of local dates on which one specialist (specialist_id
-- set) or the whole clinic (specialist_id NULL) takes no bookings: leave,
-- training, a closed practice. Public holidays are clinic-wide closures of
-- one day each, marked so that a year's list can be shown and replaced as
-- one. A specialist's own day with other hours stays an override; the slot
-- engine reads a closure's dates as closed overrides of every specialist
-- it covers.

-- +goose Up
CREATE TABLE closures (
    id            bigint GENERATED ALWAYS AS IDENTITY,
    clinic_id     uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    specialist_id uuid,
    first_day     date NOT NULL,
    last_day      date NOT NULL,
    holiday       boolean NOT NULL DEFAULT false,
    note          text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id, clinic_id),
    CHECK (last_day >= first_day),
    CHECK (last_day - first_day < 366),
    CHECK (NOT holiday OR (specialist_id IS NULL AND first_day = last_day)),
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE CASCADE
);
CREATE INDEX closures_by_clinic_days ON closures (clinic_id, last_day, first_day);

-- +goose Down
DROP TABLE closures;
