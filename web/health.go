package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/platform/redisx"
	"github.com/clinic/booking/web/httpx"
)

// healthz says the process is up; it checks nothing else, so a load
// balancer does not kill every instance when the database blips.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether this instance can serve: PostgreSQL and Redis both answer.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "redis": "ok"}
	var down []string
	if err := s.deps.PingDB(ctx); err != nil {
		checks["postgres"] = "down"
		down = append(down, "postgres")
	}
	if err := redisx.Ping(ctx, s.deps.Redis); err != nil {
		checks["redis"] = "down"
		down = append(down, "redis")
	}
	if len(down) > 0 {
		return c.JSON(http.StatusServiceUnavailable, map[string]any{
			"status": "unavailable",
			"checks": checks,
			"error": httpx.ErrorDetail{
				Code:    apperr.CodeUnavailable,
				Message: "Not ready: " + joinAnd(down) + " unreachable.",
				Details: map[string]any{"down": down},
			},
		})
	}
	return c.JSON(http.StatusOK, map[string]any{"status": "ok", "checks": checks})
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	default:
		return xs[0] + " and " + xs[1]
	}
}
