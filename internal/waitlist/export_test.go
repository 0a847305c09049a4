package waitlist

import (
	"context"

	"github.com/google/uuid"
)

// CrashAfterHold makes s's offer steps fail after taking the hold and
// before committing, as a process dying there would.
func CrashAfterHold(s *Service, on bool) { s.crash.Store(on) }

// SweepClinic is s's sweep over one clinic's places and openings only.
func SweepClinic(ctx context.Context, s *Service, clinic uuid.UUID) error {
	return s.sweep(ctx, uuid.NullUUID{UUID: clinic, Valid: true})
}
