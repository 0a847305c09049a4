package public

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/web/httpx"
)

// OverHeartbeatLimit counts a heartbeat that names no clinic (a body that
// cannot be read, an id that is no hold's) against the client's address.
func (s *Public) OverHeartbeatLimit(c echo.Context) error {
	if l := s.deps.HeartbeatIPLimiter; l != nil {
		return httpx.OverLimit(c, l, "heartbeats")
	}
	return nil
}

// Heartbeat keeps clientID's hold holdID for another TTL, counted first
// against the client's address and then against the hold as beaten by
// countAs (the client id as the request carries it). Both counts are the
// hold's clinic's, made in the heartbeat's own step in Redis, so a
// heartbeat is one round trip. Hold ids are public (every page's stream
// carries them), so the hold's count is the hold's and the caller's
// together: a stranger beating someone's hold spends only his own
// allowance, never the owner's. A page beats every 10 s; these limits are
// for clients that beat in a loop. A hold id that names no clinic is
// counted as OverHeartbeatLimit counts.
//
// Errors: those of checkout.Service.Heartbeat, and RATE_LIMITED (429).
func (s *Public) Heartbeat(c echo.Context, holdID, clientID, countAs string) (holds.Hold, error) {
	ctx := c.Request().Context()
	clinicID, ok := holds.ParseHoldID(holdID)
	if !ok {
		if err := s.OverHeartbeatLimit(c); err != nil {
			return holds.Hold{}, err
		}
		return s.deps.Checkout.Heartbeat(ctx, holdID, clientID)
	}
	tag := clinicID.String()
	var counts []ratelimit.Counter
	var limits []*ratelimit.Limiter
	var who []string
	if l := s.deps.HeartbeatIPLimiter; l != nil {
		counts, limits, who = append(counts, l.CounterIn(tag, httpx.ClientNetwork(c))), append(limits, l), append(who, "connection")
	}
	if l := s.deps.HeartbeatHoldLimiter; l != nil {
		counts, limits, who = append(counts, l.CounterIn(tag, holdID+":"+holds.ClientHash(countAs))), append(limits, l), append(who, "hold")
	}
	h, err := s.deps.Checkout.Heartbeat(ctx, holdID, clientID, counts...)
	var over *holds.LimitedError
	if errors.As(err, &over) {
		return holds.Hold{}, httpx.Limited(limits[over.Counter], over.RetryAfter, "heartbeats", who[over.Counter])
	}
	return h, err
}
