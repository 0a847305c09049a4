package public

import (
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/web/httpx"
)

// OverHeartbeatLimit counts a heartbeat: with holdID "" against the
// client's address, otherwise against the hold as beaten by this client id
// (ids that are not hold ids are refused later, uncounted). Hold ids are
// public (every page's stream carries them), so the count is the hold's
// and the caller's together: a stranger beating someone's hold spends
// only his own allowance, never the owner's. A page beats every 10 s;
// these limits are for clients that beat in a loop.
func (s *Public) OverHeartbeatLimit(c echo.Context, holdID, clientID string) error {
	if holdID == "" {
		if l := s.deps.HeartbeatIPLimiter; l != nil {
			return httpx.OverLimit(c, l, "heartbeats")
		}
		return nil
	}
	if l := s.deps.HeartbeatHoldLimiter; l != nil {
		if _, ok := holds.ParseHoldID(holdID); ok {
			return httpx.OverLimitFor(c, l, holdID+":"+holds.ClientHash(clientID), "heartbeats", "hold")
		}
	}
	return nil
}
