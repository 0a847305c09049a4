package httpx

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clientaddr"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/staff"
)

type loggerKey struct{}

// RequestLogger gives each request a logger carrying its id, and logs the
// request when it ends. It logs no query strings or bodies: they can carry
// patient details.
func (s *Kit) RequestLogger(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := c.Response().Header().Get(echo.HeaderXRequestID)
		log := s.deps.Logger.With("request_id", id)
		req := c.Request()
		c.SetRequest(req.WithContext(postgres.CountQueries(context.WithValue(req.Context(), loggerKey{}, log))))
		err := next(c)
		if err != nil {
			// Let the error handler write the response now, so the status logged is the real one.
			c.Error(err)
		}
		status := c.Response().Status
		// A refusal (a 4xx: a slot taken, a bad field) is an ordinary
		// answer, and a hot slot makes a thousand of them a second: info,
		// not a warning. 429s are worth a look: warn.
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		} else if status == http.StatusTooManyRequests {
			level = slog.LevelWarn
		}
		s.Metrics.observe(req.Method, c.Path(), status, time.Since(start))
		log.LogAttrs(req.Context(), level, "request",
			slog.String("method", req.Method),
			slog.String("path", c.Path()),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
		)
		return nil
	}
}

// Recoverer turns a panic into a 500 with a stack in the log, never a crash.
func (s *Kit) Recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				LoggerFrom(c).Error("panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// LoggerFrom is the request's logger.
func LoggerFrom(c echo.Context) *slog.Logger {
	if l, ok := c.Request().Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// OverLimit counts one request of the peer's address against l. Over the
// limit it returns a 429 RATE_LIMITED error that names the limit; its
// RetryAfter becomes the Retry-After header (HandleError, or
// SetRetryAfter where a page answers with a panel instead).
func OverLimit(c echo.Context, l *ratelimit.Limiter, what string) error {
	return OverLimitFor(c, l, ClientNetwork(c), what, "connection")
}

// ClientNetwork is what the per-address limits count: the client's address
// (see clientIP), an IPv6 one by its /64, which one subscriber usually
// has whole.
func ClientNetwork(c echo.Context) string {
	ip := c.RealIP()
	if n, ok := clientaddr.Network(ip); ok {
		return n
	}
	return ip
}

// OverLimitFor is OverLimit for any key; who names it in the message.
func OverLimitFor(c echo.Context, l *ratelimit.Limiter, key, what, who string) error {
	ok, wait := l.Allow(c.Request().Context(), key)
	if ok {
		return nil
	}
	return Limited(l, wait, what, who)
}

// Limited is OverLimitFor's refusal of a request over l, whose window
// ends in wait, for a request counted elsewhere (inside a script of its
// own work).
func Limited(l *ratelimit.Limiter, wait time.Duration, what, who string) error {
	secs := apperr.Seconds(wait)
	return &apperr.Error{
		Kind: apperr.TooMany, Code: apperr.CodeRateLimited, RetryAfter: time.Duration(secs) * time.Second,
		Message: fmt.Sprintf("Too many %s from this %s: at most %d per %s. Please try again in %d seconds.",
			what, who, l.Limit(), HumanWindow(l.Window()), secs),
		Details: map[string]any{"limit": l.Limit(), "windowSeconds": int(l.Window().Seconds()), "retryAfterSeconds": secs},
	}
}

// HumanWindow is a limit's window in a message: "minute", or the duration
// as Go writes it.
func HumanWindow(d time.Duration) string {
	if d == time.Minute {
		return "minute"
	}
	return d.String()
}

// SetRetryAfter sets Retry-After from an error that carries one; the
// error handler uses it for every error, pages that answer with a panel
// instead of an error call it themselves.
func SetRetryAfter(c echo.Context, err error) {
	if ae := apperr.As(err); ae != nil && ae.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(apperr.Seconds(ae.RetryAfter)))
	}
}

// TextOnly refuses a request whose path, query or form carries a NUL or
// bytes that are not UTF-8, with 400: no browser sends them, they can name
// nothing here, and PostgreSQL refuses such text with an error that would
// otherwise be a 500.
func TextOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if !PlainText(req.URL.Path) {
			return apperr.Invalidf("path", "The address holds characters that are not allowed.")
		}
		if q := req.URL.RawQuery; strings.IndexByte(q, '%') >= 0 || !PlainText(q) {
			// Only an escape or the raw bytes themselves can make a name
			// or value that is not plain text: a clean query (every read
			// of a week's times) is not parsed here to be checked.
			if err := plainValues(req.URL.Query()); err != nil {
				return err
			}
		}
		// The pages' forms; the API reads JSON, whatever the Content-Type
		// says (curl -d sends JSON as a form), so its body is left unread.
		if !strings.HasPrefix(req.URL.Path, "/v1/") {
			switch ct := req.Header.Get(echo.HeaderContentType); {
			case strings.HasPrefix(ct, echo.MIMEApplicationForm):
				_ = req.ParseForm() // what does not parse, the handler does not see either
				if err := plainValues(req.PostForm); err != nil {
					return err
				}
			case strings.HasPrefix(ct, echo.MIMEMultipartForm):
				// No form here takes files, but FormValue reads multipart
				// bodies too: their fields are checked the same way.
				if err := req.ParseMultipartForm(32 << 10); err == nil {
					if err := plainValues(req.MultipartForm.Value); err != nil {
						return err
					}
				}
			}
		}
		return next(c)
	}
}

func plainValues(vs url.Values) error {
	for name, v := range vs {
		if !PlainText(name) {
			return apperr.Invalidf("", "A field name holds characters that are not allowed.")
		}
		for _, s := range v {
			if !PlainText(s) {
				return apperr.Invalidf(name, "%s holds characters that are not allowed.", name)
			}
		}
	}
	return nil
}

// PlainText says whether s is text every handler accepts: valid UTF-8 without NUL.
func PlainText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// RequireStaff lets signed-in staff through and sends everyone else to the
// sign-in page (an htmx request gets HX-Redirect). The account is loaded
// on every request, with its session: a disabled account or an ended
// session is signed out at once. While the clinic requires a second
// factor the account has not set up, every page but its set-up and
// signing out leads to the set-up.
func (s *Kit) RequireStaff(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		sm := s.deps.Sessions
		id, err := uuid.Parse(sm.GetString(ctx, "staffId"))
		if err == nil {
			hash := staff.SessionHash(sm.Token(ctx))
			if u, err := s.deps.Staff.SignedIn(ctx, id, hash); err == nil {
				c.SetRequest(c.Request().WithContext(context.WithValue(ctx, staffKey{}, u)))
				c.Response().Header().Set("Cache-Control", "no-store")
				s.sessionSeen(c, u, hash)
				if u.MustSetUpSecondFactor() && !SecondFactorSetUpPath(c.Request().URL.Path) {
					return s.toSecondFactorSetUp(c)
				}
				return next(c)
			}
		}
		if strings.HasPrefix(c.Request().URL.Path, "/v1/") {
			return apperr.New(apperr.Unauthorized, apperr.CodeSignInRequired, "Sign in as staff first.")
		}
		return redirectTo(c, "/staff/login")
	}
}

// StaffHome is where signing in lands: the day plan, where the front
// desk books and moves.
const StaffHome = "/staff/day"

// SecondFactorSetUp is the page where an account sets up its second factor.
const SecondFactorSetUp = "/staff/account/second-factor"

// SecondFactorSetUpPath says whether path is one an account that must set
// up a second factor may use: the set-up itself and signing out.
func SecondFactorSetUpPath(path string) bool {
	return path == SecondFactorSetUp || path == "/staff/logout"
}

func (s *Kit) toSecondFactorSetUp(c echo.Context) error {
	if strings.HasPrefix(c.Request().URL.Path, "/v1/") {
		return apperr.New(apperr.Forbidden, CodeSecondFactorRequired, "This clinic requires a second factor: set one up on Your account first.")
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		c.Response().Header().Set("HX-Redirect", SecondFactorSetUp)
		return c.NoContent(http.StatusForbidden)
	}
	return c.Redirect(http.StatusSeeOther, SecondFactorSetUp)
}

// CodeSecondFactorRequired refuses a staff API call of an account that
// must set up its second factor first (403).
const CodeSecondFactorRequired = "SECOND_FACTOR_REQUIRED"

// sessionSeen writes the session's "last seen" in its account's list of
// sessions, at most every staff.SeenEvery (the session remembers when it
// last did). A failure costs only the list's freshness.
func (s *Kit) sessionSeen(c echo.Context, u staff.User, hash []byte) {
	ctx := c.Request().Context()
	now := time.Now()
	if last := s.deps.Sessions.GetInt64(ctx, "seen"); now.Sub(time.Unix(last, 0)) < staff.SeenEvery {
		return
	}
	ua := BrowserName(c.Request().UserAgent())
	if err := s.deps.Staff.SessionSeen(ctx, u.ID, hash, ua, c.RealIP(), now); err != nil {
		LoggerFrom(c).Warn("session last seen", "err", err)
		return
	}
	s.deps.Sessions.Put(ctx, "seen", now.Unix())
}

// LimitStaffWrites limits changes per account, so a script or a stolen
// session cannot flood the calendar and the audit log. It runs after the
// CSRF check: a forged request spends nothing of the account's allowance.
func (s *Kit) LimitStaffWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			if err := OverLimitFor(c, s.deps.StaffWriteLimiter, StaffUser(c).ID.String(), "changes", "account"); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// csrf refuses state-changing requests of signed-in staff without the
// session's token, from the form field _csrf or the X-CSRF-Token header
// htmx sends.
func (s *Kit) CSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		want := s.deps.Sessions.GetString(c.Request().Context(), "csrf")
		got := c.Request().Header.Get("X-CSRF-Token")
		if got == "" {
			got = c.FormValue("_csrf")
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
			return ErrCSRF()
		}
		return next(c)
	}
}

// ErrCSRF is the refusal of a form without its CSRF token.
func ErrCSRF() error {
	return apperr.New(apperr.Forbidden, apperr.CodeCSRF, "This form expired or came from another site. Reload the page and try again.")
}

// SecurityHeaders are sent on every answer.
func SecurityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.HasSuffix(c.Request().URL.Path, "/live") || strings.HasSuffix(c.Request().URL.Path, "/stream") {
			// Event streams are never rendered as documents, and every
			// header is kept in memory for the stream's whole life.
			c.Response().Header().Set("X-Content-Type-Options", "nosniff")
			return next(c)
		}
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		return next(c)
	}
}

// Sessions loads the session and commits it just before the response
// header is written. Unlike scs's LoadAndSave it does not wrap the writer,
// so streams flush as usual, and a store error is an error, not a panic.
// The pages' language switcher (switchLanguage) answers first: it needs
// no session.
func (s *Kit) Sessions(next echo.HandlerFunc) echo.HandlerFunc {
	sm := s.deps.Sessions
	return switchLanguage(func(c echo.Context) error {
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
					LoggerFrom(c).Error("commit session", "err", err)
					return
				}
				sm.WriteSessionCookie(ctx, c.Response(), token, expiry)
			case scs.Destroyed:
				sm.WriteSessionCookie(ctx, c.Response(), "", time.Time{})
			}
		})
		return next(c)
	})
}
