package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Limits of the waitlist's anonymous actions.
const (
	waitlistJoinsPerAddress = 10 // per hour
	waitlistJoinsPerEmail   = 3  // per hour, per clinic
	offerAnswersPerMinute   = 30
)

// waitlistRoutes are the patients' waitlist pages.
func (s *Server) waitlistRoutes(pages *echo.Group) {}

func (s *Server) apiJoinWaitlist(c echo.Context) error { return c.NoContent(http.StatusNotImplemented) }
