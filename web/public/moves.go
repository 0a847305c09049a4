package public

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/web/httpx"
)

// moveKey is what the per-link move limit counts: a keyed hash of the
// manage token (which a move keeps), so Redis holds no link.
func (s *Public) moveKey(token string) string {
	return hex.EncodeToString(s.kit.Signer.Sign("move-link", token))
}

// LinkMovesSpent refuses a move by a manage link (429) once the link has
// made its moves of the hour: each move sends the patient an e-mail, and
// moving one booking back and forth must not flood a mailbox. Only moves
// made count (CountLinkMove), not tries; two tries at once cannot both
// pass, since a move needs the booking's current version. When Redis
// cannot answer, the move goes ahead, as with the other move limit.
func (s *Public) LinkMovesSpent(c echo.Context, token string) error {
	lim := s.deps.MoveLinkLimiter
	spent, wait, err := lim.Spent(c.Request().Context(), s.moveKey(token))
	if err != nil {
		httpx.LoggerFrom(c).Warn("move limit check failed; allowing", "err", err)
		return nil
	}
	if !spent {
		return nil
	}
	secs := apperr.Seconds(wait)
	return &apperr.Error{
		Kind: apperr.TooMany, Code: apperr.CodeRateLimited, RetryAfter: time.Duration(secs) * time.Second,
		Message: fmt.Sprintf("This booking was moved too often: at most %d moves per hour by its manage link. Please try again in %d seconds.",
			lim.Limit(), secs),
		Details: map[string]any{"limit": lim.Limit(), "windowSeconds": int(lim.Window().Seconds()), "retryAfterSeconds": secs},
	}
}

// CountLinkMove counts a move the manage link made (see LinkMovesSpent).
func (s *Public) CountLinkMove(c echo.Context, token string) {
	if err := s.deps.MoveLinkLimiter.Count(c.Request().Context(), s.moveKey(token)); err != nil {
		httpx.LoggerFrom(c).Warn("count a move by manage link", "err", err)
	}
}
