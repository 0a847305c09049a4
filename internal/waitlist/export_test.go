package waitlist

// CrashAfterHold makes s's offer steps fail after taking the hold and
// before committing, as a process dying there would.
func CrashAfterHold(s *Service, on bool) { s.crash.Store(on) }
