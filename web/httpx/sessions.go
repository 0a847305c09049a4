package httpx

import (
	"context"
	"crypto/hmac"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
)

// NewSessions stores sessions in PostgreSQL (the sessions table of the
// first migration), so every instance sees every session.
func NewSessions(pool *pgxpool.Pool, secure bool) *scs.SessionManager {
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

// clientCookie carries a browser's identity for holds: "b_<32 hex>.<mac>".
// It is signed, so a page cannot choose its id (nor claim another
// client's), and it is all there is: a visit that never holds a slot
// writes nothing on the server.
const (
	clientCookie   = "clinic_client"
	clientLifetime = 24 * time.Hour
)

// ClientID is the browser's client id, made (and sent as a cookie) on first
// use. A new id is kept on the request's context too, so a handler that
// asks twice gets one id.
func (s *Kit) ClientID(c echo.Context) string {
	if id := s.ExistingClientID(c); id != "" {
		return id
	}
	id := "b_" + RandomHex(16)
	mac := base64.RawURLEncoding.EncodeToString(s.Signer.Sign("client", id))
	ck := s.Cookie(clientCookie, id+"."+mac, "/", int(clientLifetime/time.Second))
	c.SetCookie(ck)
	c.Set(clientCookie, id)
	return id
}

// ExistingClientID is the browser's client id without making one: its
// signed cookie, or the client id an older session kept.
func (s *Kit) ExistingClientID(c echo.Context) string {
	if id, ok := c.Get(clientCookie).(string); ok {
		return id
	}
	if ck, err := c.Request().Cookie(clientCookie); err == nil {
		id, mac, _ := strings.Cut(ck.Value, ".")
		got, err := base64.RawURLEncoding.DecodeString(mac)
		if err == nil && strings.HasPrefix(id, "b_") && hmac.Equal(got, s.Signer.Sign("client", id)) {
			return id
		}
	}
	return s.deps.Sessions.GetString(c.Request().Context(), "clientId")
}

// EndStaffSessions deletes from sm's store every session signed in as the
// staff account id but the one of the token keep (none when ""), and
// says how many it deleted. It reads every session once (the store keeps
// no index by account), which a password change or a reset can afford.
func EndStaffSessions(ctx context.Context, sm *scs.SessionManager, id uuid.UUID, keep string) (int, error) {
	want := id.String()
	n := 0
	err := sm.Iterate(ctx, func(ctx context.Context) error {
		if sm.GetString(ctx, "staffId") != want || (keep != "" && sm.Token(ctx) == keep) {
			return nil
		}
		n++
		return sm.Destroy(ctx)
	})
	return n, err
}
