package waitlist

import (
	"context"
	"errors"
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
