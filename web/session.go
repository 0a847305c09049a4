package web

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
)

// newSessions stores sessions in PostgreSQL (the sessions table of the
// first migration), so every instance sees every session.
func newSessions(pool *pgxpool.Pool, secure bool) *scs.SessionManager {
	sm := scs.New()
	sm.Store = pgxstore.NewWithCleanupInterval(pool, 30*time.Minute)
	sm.Lifetime = 24 * time.Hour
	sm.IdleTimeout = 12 * time.Hour
	sm.Cookie.Name = "clinic_session"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = secure
	sm.Cookie.Path = "/"
	return sm
}

// sessions loads the session and commits it just before the response
// header is written. Unlike scs's LoadAndSave it does not wrap the writer,
// so streams flush as usual, and a store error is an error, not a panic.
func (s *Server) sessions(next echo.HandlerFunc) echo.HandlerFunc {
	sm := s.deps.Sessions
	return func(c echo.Context) error {
		req := c.Request()
		c.Response().Header().Add("Vary", "Cookie")
		token := ""
		if ck, err := req.Cookie(sm.Cookie.Name); err == nil {
			token = ck.Value
		}
		ctx, err := sm.Load(req.Context(), token)
		if err != nil {
			return err
		}
		c.SetRequest(req.WithContext(ctx))
		c.Response().Before(func() {
			switch sm.Status(ctx) {
			case scs.Modified:
				token, expiry, err := sm.Commit(ctx)
				if err != nil {
					loggerFrom(c).Error("commit session", "err", err)
					return
				}
				sm.WriteSessionCookie(ctx, c.Response(), token, expiry)
			case scs.Destroyed:
				sm.WriteSessionCookie(ctx, c.Response(), "", time.Time{})
			}
		})
		return next(c)
	}
}

// clientID is the browser's identity for holds: a random value kept in its
// session, so a page cannot claim to be another client.
func (s *Server) clientID(c echo.Context) string {
	ctx := c.Request().Context()
	if id := s.deps.Sessions.GetString(ctx, "clientId"); id != "" {
		return id
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := "b_" + hex.EncodeToString(b)
	s.deps.Sessions.Put(ctx, "clientId", id)
	return id
}

// existingClientID is the session's client id without creating one.
func (s *Server) existingClientID(c echo.Context) string {
	return s.deps.Sessions.GetString(c.Request().Context(), "clientId")
}
