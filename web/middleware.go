package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"
)

type loggerKey struct{}

// requestLogger gives each request a logger carrying its id, and logs the
// request when it ends. It logs no query strings or bodies: they can carry
// patient details.
func (s *Server) requestLogger(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := c.Response().Header().Get(echo.HeaderXRequestID)
		log := s.deps.Logger.With("request_id", id)
		req := c.Request()
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), loggerKey{}, log)))
		err := next(c)
		if err != nil {
			// Let the error handler write the response now, so the status logged is the real one.
			c.Error(err)
		}
		status := c.Response().Status
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		} else if status >= 400 {
			level = slog.LevelWarn
		}
		s.metrics.observe(req.Method, c.Path(), status, time.Since(start))
		log.LogAttrs(req.Context(), level, "request",
			slog.String("method", req.Method),
			slog.String("path", c.Path()),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
		)
		return nil
	}
}

// recoverer turns a panic into a 500 with a stack in the log, never a crash.
func (s *Server) recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				loggerFrom(c).Error("panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// loggerFrom is the request's logger.
func loggerFrom(c echo.Context) *slog.Logger {
	if l, ok := c.Request().Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
