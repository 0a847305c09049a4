package holds

// Keeping a hold through the e-mailed code step.

import (
	"context"
	"errors"
	"time"
)

// PinUntil keeps the client's live hold until until without heartbeats,
// but never past its KeepUntil: while a patient reads the code we e-mailed
// them, their page may be in the background and its heartbeats stopped,
// and the hold must not lapse for that; it still ends with its longest
// life. A hold that lives longer already is left as it is. The new expiry
// is announced as a heartbeat is. Errors: ErrExpired (expired or unknown),
// ErrNotOwner.
func (s *Store) PinUntil(ctx context.Context, holdID, clientID string, until time.Time) (Hold, error) {
	h, ok, err := s.lookup(ctx, holdID)
	if err != nil {
		return Hold{}, err
	}
	if !ok {
		return Hold{}, ErrExpired
	}
	now := s.now()
	exp, capped := until, !h.KeepUntil.IsZero() && until.After(h.KeepUntil)
	if capped {
		// To the millisecond: a hold that lapses at its KeepUntil reached
		// its longest life (reachedMaxLife).
		exp = h.KeepUntil
	}
	d := exp.Sub(now).Truncate(time.Millisecond)
	switch {
	case d <= 0 && capped:
		return Hold{}, ErrExpired // its life is over
	case d <= 0:
		return h, nil
	}
	// The script announces an extended hold; an unchanged one needs no event.
	h, _, err = s.runExtend(ctx, h, clientID, d, exp, true, false, "-")
	switch {
	case errors.Is(err, errNoHold):
		return Hold{}, ErrExpired
	case err != nil:
		return Hold{}, err
	}
	return h, nil
}
