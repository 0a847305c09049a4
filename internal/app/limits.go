package app

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/verify"
	"github.com/clinic/booking/web"
)

// heartbeatsPerHold, per minute, is twice what a booking page sends (one
// every 10 s).
const heartbeatsPerHold = 12

// How many lists "find my booking" may be asked for in an hour: from one
// client address, and for one e-mail address at one clinic (so nobody can
// fill a stranger's mailbox).
const (
	findsPerAddress = 10
	findsPerEmail   = 3
)

// Limits of the waitlist's anonymous actions.
const (
	waitlistJoinsPerAddress = 10 // per hour
	waitlistJoinsPerEmail   = 3  // per hour, per clinic
	offerAnswersPerMinute   = 30
)

// setLimiters sets d's rate limits from o, with their defaults. Their
// counters are named with o.LimitScope first.
func setLimiters(d *web.Deps, rdb redis.UniversalClient, logger *slog.Logger, o Options) {
	scope := o.LimitScope
	limiter := func(name string, limit int, window time.Duration) *ratelimit.Limiter {
		return ratelimit.New(rdb, scope+name, limit, window, logger)
	}
	logins := cmp.Or(max(o.LoginsPerMinute, 0), 5)
	d.LoginIPLimiter = limiter("login-ip", 4*logins, time.Minute)
	d.LoginAccountLimiter = limiter("login-account", logins, time.Minute)
	d.LoginDeviceLimiter = limiter("login-device", 2*logins, time.Minute)
	d.CodeAccountLimiter = limiter("code-account", cmp.Or(max(o.CodeTriesPerHour, 0), 10), time.Hour)
	d.HoldLimiter = limiter("hold-ip", cmp.Or(max(o.HoldsPerMinute, 0), 30), time.Minute)
	d.MoveLimiter = limiter("move-ip", cmp.Or(max(o.MovesPerMinute, 0), 60), time.Minute)
	d.MoveLinkLimiter = limiter("move-link", cmp.Or(max(o.MovesPerLinkPerHour, 0), 6), time.Hour)
	d.FindIPLimiter = limiter("find-ip", findsPerAddress, time.Hour)
	d.FindEmailLimiter = limiter("find-email", findsPerEmail, time.Hour)
	d.WaitlistIPLimiter = limiter("waitlist-ip", waitlistJoinsPerAddress, time.Hour)
	d.WaitlistEmailLimiter = limiter("waitlist-email", waitlistJoinsPerEmail, time.Hour)
	d.OfferLimiter = limiter("offer-ip", offerAnswersPerMinute, time.Minute)
	d.StaffWriteLimiter = limiter("staff-writes", cmp.Or(max(o.StaffWritesPerMinute, 0), 120), time.Minute)
	if o.APIHoldsPerMinute > 0 {
		d.APIHoldLimiter = limiter("api-hold-ip", o.APIHoldsPerMinute, time.Minute)
	}
	d.HeartbeatHoldLimiter = limiter("heartbeat-hold", heartbeatsPerHold, time.Minute)
	d.HeartbeatIPLimiter = limiter("heartbeat-ip", cmp.Or(max(o.HeartbeatsPerMinute, 0), 120), time.Minute)
	feedRequests := cmp.Or(max(o.FeedRequestsPerMinute, 0), 30)
	d.FeedIPLimiter = limiter("feed-ip", feedRequests, time.Minute)
	d.FeedLimiter = limiter("feed", feedRequests, time.Minute)
}

// newVerification builds the allowance of unverified bookings per address
// and the e-mailed codes, with their limits (see package verify).
func newVerification(rdb redis.UniversalClient, reg prometheus.Registerer, logger *slog.Logger, o Options, key []byte) *verify.Service {
	return verify.New(rdb, verify.Config{
		Allowance:        ratelimit.New(rdb, o.LimitScope+"booking-address", cmp.Or(max(o.BookingsPerAddress, 0), 3), time.Hour, logger),
		Codes:            ratelimit.New(rdb, o.LimitScope+"code-recipient", cmp.Or(max(o.CodesPerRecipient, 0), 5), time.Hour, logger),
		CodesByAddress:   ratelimit.New(rdb, o.LimitScope+"code-address", cmp.Or(max(o.CodesPerAddress, 0), 10), time.Hour, logger),
		GuessesByAddress: ratelimit.New(rdb, o.LimitScope+"code-guess-address", cmp.Or(max(o.CodeGuessesPerAddress, 0), 30), time.Hour, logger),
		Sender:           o.Mail.Sender, Key: key, Scope: o.LimitScope, Registry: reg, Logger: logger,
	})
}
