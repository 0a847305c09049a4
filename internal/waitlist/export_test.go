package waitlist

import (
	"context"
	"errors"

	"github.com/google/uuid"
)

// CrashAfterHold makes s's offer steps fail after taking the hold and
// before committing (on), as a process dying there would, through its
// Config.AfterHold; off, they run through.
func CrashAfterHold(s *Service, on bool) {
	s.cfg.AfterHold = nil
	if on {
		s.cfg.AfterHold = func(context.Context) error { return errors.New("waitlist: crashed after taking the hold (test)") }
	}
}

// SweepClinic is s's sweep over one clinic's places and openings only.
func SweepClinic(ctx context.Context, s *Service, clinic uuid.UUID) error {
	return s.sweep(ctx, uuid.NullUUID{UUID: clinic, Valid: true})
}
