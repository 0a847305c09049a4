package checkout

// The clinics' verification modes, kept in memory: every online booking
// needs its clinic's, and the booking's own transaction checks that the
// mode it went by still stands (booking.BookRequest.ClinicVerification).

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// modeTTL is how long a clinic's verification mode is kept. A clinic that
// asks more than the kept mode says is obeyed by the next booking anyway
// (its transaction's check fails, and the mode is read again); one that
// asks less may still be asked for codes by this process for so long.
const modeTTL = 5 * time.Second

// modes are the clinics' verification modes as last read.
type modes struct{ m sync.Map } // clinic id -> modeAt

type modeAt struct {
	mode string
	read time.Time
}

// get is the clinic's verification mode, from memory when read less than
// modeTTL ago.
func (k *modes) get(ctx context.Context, q *db.Queries, clinicID uuid.UUID) (string, error) {
	if v, ok := k.m.Load(clinicID); ok && time.Since(v.(modeAt).read) < modeTTL {
		return v.(modeAt).mode, nil
	}
	mode, err := q.ClinicVerification(ctx, clinicID)
	if err != nil {
		return "", err
	}
	k.m.Store(clinicID, modeAt{mode: mode, read: time.Now()})
	return mode, nil
}

// forget drops the clinic's mode: a booking found it changed.
func (k *modes) forget(clinicID uuid.UUID) { k.m.Delete(clinicID) }
