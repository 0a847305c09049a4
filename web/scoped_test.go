package web_test

import (
	"github.com/google/uuid"

	"github.com/clinic/booking/web"
)

// scoped gives a test server rate-limit counters of its own: every test
// server comes from 127.0.0.1, and none may spend another's allowance.
func scoped(o web.Options) web.Options {
	o.LimitScope = uuid.NewString() + ":"
	return o
}
