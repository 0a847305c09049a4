// Package config reads the server's settings from the environment, with
// defaults that work on a developer's machine.
package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/platform/redisx"
	"github.com/clinic/booking/internal/secret"
)

// Config is every setting of the server.
type Config struct {
	Addr             string
	DatabaseURL      string
	RedisURL         string
	DBMaxConns       int32
	DBMinConns       int32
	RedisPoolSize    int
	LogLevel         slog.Level
	LogFormat        string // "text" or "json"
	MigrateOnStart   bool
	ShutdownTimeout  time.Duration
	TimeslotCacheTTL time.Duration
	HoldTTL          time.Duration
	SecureCookies    bool
	WarnHeapMB       int // log a warning when the heap passes this
	WarnStreams      int // log a warning when open streams pass this

	// SecretKey signs the sign-in form's CSRF token and the device cookie
	// (SECRET_KEY, at least 32 bytes). Empty: a key made once and kept in
	// PostgreSQL, shared by every instance.
	SecretKey string
	// MetricsAddr serves /metrics on a private address of its own
	// (METRICS_ADDR). Empty: no listener of its own.
	MetricsAddr string
	// MetricsPublic also serves /metrics on Addr, readable by anyone who
	// reaches it (METRICS_PUBLIC, false: Addr answers 404 there).
	MetricsPublic bool

	// PublicURL is the address people reach the server at (PUBLIC_URL),
	// without a trailing slash: links the command line prints (a new
	// clinic admin's sign-in link) start with it. Default: http://localhost
	// with ADDR's port.
	PublicURL string
	// PublicURLSet says the operator set PUBLIC_URL; without it the server
	// builds the links it shows (a kiosk's QR code, an admin's sign-in link)
	// from each request's own scheme and host.
	PublicURLSet bool

	// TrustedProxies are the load balancers in front: a request from one of
	// them is limited by the address it forwards (X-Forwarded-For), not by
	// its own. Empty: every peer is the client.
	TrustedProxies []netip.Prefix

	// Rate limits per peer address, per minute.
	HoldsPerMinute    int // holds from the booking pages
	APIHoldsPerMinute int // POST /v1/holds
	HeartbeatsPerMin  int // hold heartbeats, pages and API (per hold: 12)
	// Calendar feeds: how old a served feed may be, and how many requests
	// one client address, and one feed address, may make a minute.
	FeedRefresh           time.Duration
	FeedRequestsPerMinute int
	MovesPerMinute        int // reschedules by manage link, pages and API
	LoginsPerMinute       int // staff sign-in attempts per account (per address: four times)
	// CodeTriesPerHour is how many second-factor codes one staff account
	// may be given in an hour from browsers not known to it
	// (SECOND_FACTOR_TRIES_PER_HOUR, 10): someone who has the password
	// cannot try the code space at the per-minute rate all day.
	CodeTriesPerHour  int
	StaffWritesPerMin int // staff changes per account

	// HoldsPerAddress is the most live holds of a clinic from one client
	// address (an IPv6 address counts by its /64).
	HoldsPerAddress int
	// HoldMaxLife is the longest heartbeats keep a hold, from its claim.
	HoldMaxLife time.Duration
	// StreamsPerAddress is how many public event streams one client
	// address network may keep open on one server process.
	StreamsPerAddress int
	// BookingsPerAddress is how many online bookings without a verified
	// contact one client address network may make at one clinic per hour;
	// past it the clinic asks for an e-mailed code (or refuses).
	BookingsPerAddress int
	// CodesPerRecipient is how many verification codes one e-mail address
	// may be sent per hour.
	CodesPerRecipient int
	// CodesPerAddress is how many verification codes the requests of one
	// client address network may have e-mailed per hour, to anyone; and
	// CodeGuessesPerAddress how many codes it may type per hour.
	CodesPerAddress, CodeGuessesPerAddress int

	// SMTP is the mail server patients' e-mails go through (SMTP_URL);
	// nil: none, and the e-mails are kept for the staff's outbox page.
	SMTP *mail.Config
	// MailFrom is the sender of those e-mails (MAIL_FROM).
	MailFrom string
	// MailWorkers is how many e-mails one instance sends at once.
	MailWorkers int
	// WaitlistOfferFor is how long a waitlist offer stands
	// (WAITLIST_OFFER_MINUTES, 15).
	WaitlistOfferFor time.Duration
	// MailRetry is the wait after a failed send, doubling with each
	// further failure up to an hour.
	MailRetry time.Duration
	// MailsPerRecipient is how many e-mails public requests (online
	// bookings, cancels, moves, lookups, waitlist joins) may cause to one
	// address from one clinic in 24 hours (MAILS_PER_RECIPIENT, 6);
	// MailsPerRecipientServer from every clinic of the server together
	// (MAILS_PER_RECIPIENT_SERVER, three times the first). Past them a
	// message is held back for staff.
	MailsPerRecipient       int
	MailsPerRecipientServer int

	// RetentionMonths is how long a new clinic keeps a booking's patient
	// details after the appointment (RETENTION_MONTHS, 12, 1 to 120);
	// MailRetentionDays how long it keeps stored e-mails and the queue's
	// records of them after sending (MAIL_RETENTION_DAYS, 30, 1 to 365).
	// Each clinic's admins change their own on the settings page.
	RetentionMonths   int
	MailRetentionDays int

	// ErasureLedger is the file the ledger of erased patients is appended
	// to (ERASURE_LEDGER, "erasures.ledger" in the working directory): it
	// must live apart from the database and its backups, so that a
	// restored backup gets its erasures again.
	ErasureLedger string
}

// Defaults for a local run, matching what `make services` starts.
const (
	DefaultDatabaseURL = "postgres://postgres@127.0.0.1:54320/clinic?sslmode=disable"
	DefaultRedisURL    = "redis://127.0.0.1:63790/0"
)

// Load reads the environment through getenv (os.Getenv in main, a map in tests)
// and names every setting that is wrong.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:        or(getenv("ADDR"), ":8080"),
		DatabaseURL: or(getenv("DATABASE_URL"), DefaultDatabaseURL),
		RedisURL:    or(getenv("REDIS_URL"), DefaultRedisURL),
		LogFormat:   or(getenv("LOG_FORMAT"), "text"),
	}
	var errs []string
	intVar := func(name string, def, min, max int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			errs = append(errs, fmt.Sprintf("%s=%q: want a whole number from %d to %d", name, v, min, max))
			return def
		}
		return n
	}
	boolVar := func(name string, def bool) bool {
		v := getenv(name)
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q: want true or false", name, v))
			return def
		}
		return b
	}
	c.DBMaxConns = int32(intVar("DB_MAX_CONNS", 20, 1, 1000))
	c.DBMinConns = int32(intVar("DB_MIN_CONNS", 2, 0, 1000))
	c.RedisPoolSize = intVar("REDIS_POOL_SIZE", 50, 1, 10000)
	c.MigrateOnStart = boolVar("MIGRATE_ON_START", true)
	c.ShutdownTimeout = time.Duration(intVar("SHUTDOWN_TIMEOUT_SECONDS", 10, 1, 600)) * time.Second
	c.TimeslotCacheTTL = time.Duration(intVar("TIMESLOTS_CACHE_TTL_SECONDS", 300, 0, 86400)) * time.Second // 0: no cache
	c.HoldTTL = time.Duration(intVar("HOLD_TTL_SECONDS", 30, 5, 3600)) * time.Second
	c.SecureCookies = boolVar("SECURE_COOKIES", false)
	c.WarnHeapMB = intVar("WARN_HEAP_MB", 500, 1, 1<<20)
	c.WarnStreams = intVar("WARN_STREAMS", 20000, 1, 1<<24)
	c.HoldsPerMinute = intVar("HOLDS_PER_MINUTE", 30, 1, 1<<24)
	c.APIHoldsPerMinute = intVar("API_HOLDS_PER_MINUTE", 120, 1, 1<<24)
	c.HeartbeatsPerMin = intVar("HEARTBEATS_PER_MINUTE", 120, 1, 1<<24)
	c.FeedRefresh = time.Duration(intVar("FEED_REFRESH_SECONDS", 60, 1, 3600)) * time.Second
	c.FeedRequestsPerMinute = intVar("FEED_REQUESTS_PER_MINUTE", 30, 1, 1<<24)
	c.HoldsPerAddress = intVar("HOLDS_PER_ADDRESS", 4, 1, 10000)
	c.HoldMaxLife = time.Duration(intVar("HOLD_MAX_SECONDS", 600, 10, 86400)) * time.Second
	c.BookingsPerAddress = intVar("BOOKINGS_PER_ADDRESS", 3, 1, 1<<24)
	c.CodesPerRecipient = intVar("CODES_PER_RECIPIENT", 5, 1, 1000)
	c.CodesPerAddress = intVar("CODES_PER_ADDRESS", 10, 1, 1<<24)
	c.CodeGuessesPerAddress = intVar("CODE_GUESSES_PER_ADDRESS", 30, 1, 1<<24)
	c.MovesPerMinute = intVar("MOVES_PER_MINUTE", 60, 1, 1<<24)
	c.LoginsPerMinute = intVar("LOGINS_PER_MINUTE", 5, 1, 1<<24)
	c.CodeTriesPerHour = intVar("SECOND_FACTOR_TRIES_PER_HOUR", 10, 1, 1<<24)
	c.StaffWritesPerMin = intVar("STAFF_WRITES_PER_MINUTE", 120, 1, 1<<24)
	c.StreamsPerAddress = intVar("STREAMS_PER_ADDRESS", 50, 1, 1<<20)
	c.MetricsAddr = getenv("METRICS_ADDR")
	c.MetricsPublic = boolVar("METRICS_PUBLIC", false)
	c.MailWorkers = intVar("MAIL_WORKERS", 4, 1, 100)
	c.MailRetry = time.Duration(intVar("MAIL_RETRY_SECONDS", 30, 1, 3600)) * time.Second
	c.WaitlistOfferFor = time.Duration(intVar("WAITLIST_OFFER_MINUTES", 15, 1, 24*60)) * time.Minute
	c.MailsPerRecipient = intVar("MAILS_PER_RECIPIENT", 6, 1, 1<<20)
	// The server's own cap guards the one sender every clinic shares;
	// how many clinics share it is the operator's to weigh, so it has a
	// setting of its own, three clinics' worth unless set.
	c.MailsPerRecipientServer = intVar("MAILS_PER_RECIPIENT_SERVER", 3*c.MailsPerRecipient, 1, 1<<22)
	c.RetentionMonths = intVar("RETENTION_MONTHS", 12, 1, 120)
	c.MailRetentionDays = intVar("MAIL_RETENTION_DAYS", 30, 1, 365)
	errs = append(errs, c.readCredentials(getenv)...)

	var bad []string
	c.TrustedProxies, bad = trustedProxies(getenv("TRUSTED_PROXIES"))
	errs = append(errs, bad...)

	errs = append(errs, c.conflicts()...)
	errs = append(errs, c.readForms(getenv)...)
	var err error
	c.PublicURLSet = getenv("PUBLIC_URL") != ""
	if c.PublicURL, err = publicURL(getenv("PUBLIC_URL"), c.Addr); err != nil {
		errs = append(errs, err.Error())
	}
	if c.MailFrom, err = mailFrom(getenv("MAIL_FROM"), c.PublicURL, c.SMTP != nil); err != nil {
		errs = append(errs, err.Error())
	}
	c.ErasureLedger = or(getenv("ERASURE_LEDGER"), "erasures.ledger")
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// readForms reads the log level and checks the settings that have a form
// of their own (the log format, the database's and Redis's URLs).
func (c *Config) readForms(getenv func(string) string) []string {
	var errs []string
	if err := c.LogLevel.UnmarshalText([]byte(or(getenv("LOG_LEVEL"), "info"))); err != nil {
		errs = append(errs, fmt.Sprintf("LOG_LEVEL=%q: want debug, info, warn or error", getenv("LOG_LEVEL")))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Sprintf("LOG_FORMAT=%q: want text or json", c.LogFormat))
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, "DATABASE_URL: want postgres://user:password@host:port/dbname")
	}
	if err := redisx.Check(c.RedisURL); err != nil {
		errs = append(errs, fmt.Sprintf("REDIS_URL: want redis://host:port/db, or redis+cluster://host:port,host:port,... for a Redis Cluster (%v)", err))
	}
	return errs
}

// readCredentials reads the settings that carry secrets: the mail
// server's URL and the signing key.
func (c *Config) readCredentials(getenv func(string) string) []string {
	var errs []string
	if raw := getenv("SMTP_URL"); raw != "" {
		m, err := mail.ParseURL(raw)
		if err != nil {
			errs = append(errs, err.Error())
		}
		c.SMTP = &m
	}
	if c.SecretKey = getenv("SECRET_KEY"); c.SecretKey != "" {
		if err := secret.Check(c.SecretKey); err != nil {
			errs = append(errs, "SECRET_KEY: "+err.Error())
		}
	}
	return errs
}

// conflicts are the settings that are each fine but do not go together.
func (c Config) conflicts() []string {
	var errs []string
	if c.HoldMaxLife < c.HoldTTL {
		errs = append(errs, fmt.Sprintf("HOLD_MAX_SECONDS=%d is below HOLD_TTL_SECONDS=%d", int(c.HoldMaxLife/time.Second), int(c.HoldTTL/time.Second)))
	}
	if c.MailsPerRecipientServer < c.MailsPerRecipient {
		errs = append(errs, fmt.Sprintf("MAILS_PER_RECIPIENT_SERVER=%d is below MAILS_PER_RECIPIENT=%d", c.MailsPerRecipientServer, c.MailsPerRecipient))
	}
	if c.DBMinConns > c.DBMaxConns {
		errs = append(errs, fmt.Sprintf("DB_MIN_CONNS=%d is above DB_MAX_CONNS=%d", c.DBMinConns, c.DBMaxConns))
	}
	return errs
}

// LogValue prints the settings with passwords masked.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("database_url", Mask(c.DatabaseURL)),
		slog.String("redis_url", redisx.Mask(c.RedisURL)),
		slog.Int("db_max_conns", int(c.DBMaxConns)),
		slog.Int("db_min_conns", int(c.DBMinConns)),
		slog.Int("redis_pool_size", c.RedisPoolSize),
		slog.String("log_level", c.LogLevel.String()),
		slog.Bool("migrate_on_start", c.MigrateOnStart),
		slog.Duration("timeslots_cache_ttl", c.TimeslotCacheTTL),
		slog.Duration("hold_ttl", c.HoldTTL),
		slog.Bool("secure_cookies", c.SecureCookies),
		slog.String("smtp_url", smtpText(c.SMTP)),
		slog.String("mail_from", c.MailFrom),
		slog.String("erasure_ledger", c.ErasureLedger),
		slog.Duration("waitlist_offer", c.WaitlistOfferFor),
		slog.Int("mails_per_recipient", c.MailsPerRecipient),
		slog.Int("mails_per_recipient_server", c.MailsPerRecipientServer),
		slog.Int("retention_months", c.RetentionMonths),
		slog.Int("mail_retention_days", c.MailRetentionDays),
		slog.Int("warn_heap_mb", c.WarnHeapMB),
		slog.Int("holds_per_minute", c.HoldsPerMinute),
		slog.Int("api_holds_per_minute", c.APIHoldsPerMinute),
		slog.Int("heartbeats_per_minute", c.HeartbeatsPerMin),
		slog.Duration("feed_refresh", c.FeedRefresh),
		slog.Int("feed_requests_per_minute", c.FeedRequestsPerMinute),
		slog.Int("holds_per_address", c.HoldsPerAddress),
		slog.Duration("hold_max_life", c.HoldMaxLife),
		slog.Int("streams_per_address", c.StreamsPerAddress),
		slog.Int("bookings_per_address", c.BookingsPerAddress),
		slog.Int("codes_per_recipient", c.CodesPerRecipient),
		slog.Int("codes_per_address", c.CodesPerAddress),
		slog.Int("code_guesses_per_address", c.CodeGuessesPerAddress),
		slog.Int("moves_per_minute", c.MovesPerMinute),
		slog.Int("logins_per_minute", c.LoginsPerMinute),
		slog.Int("second_factor_tries_per_hour", c.CodeTriesPerHour),
		slog.Int("staff_writes_per_minute", c.StaffWritesPerMin),
		slog.Int("warn_streams", c.WarnStreams),
		slog.Any("trusted_proxies", c.TrustedProxies),
		slog.Bool("secret_key_set", c.SecretKey != ""),
		slog.String("metrics_addr", c.MetricsAddr),
		slog.Bool("metrics_public", c.MetricsPublic),
		slog.String("public_url", c.PublicURL),
	)
}

// publicURL is PUBLIC_URL checked and without its trailing slash, or,
// when it is not set, http://localhost with the port of addr.
func publicURL(v, addr string) (string, error) {
	if v == "" {
		port := "8080"
		if i := strings.LastIndex(addr, ":"); i >= 0 && i+1 < len(addr) {
			port = addr[i+1:]
		}
		return "http://localhost:" + port, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("PUBLIC_URL=%q: want http(s)://host[:port][/path], e.g. https://booking.example.org", v)
	}
	return strings.TrimRight(v, "/"), nil
}

// Mask hides the password of a URL.
func Mask(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// hostOf is the host name of an address, for a default sender.
// mailFrom is the sender of patients' e-mails: MAIL_FROM, else bookings@
// the public address's domain. An address that has no domain (an IP
// address, localhost) makes no sender a mail server would take, nor one a
// patient would trust: with a mail server MAIL_FROM is then required;
// without one (the e-mails are only kept for the outbox page) the sender
// says plainly that it is a placeholder.
func mailFrom(set, publicURL string, smtp bool) (string, error) {
	if set != "" {
		return set, nil
	}
	host := hostOf(publicURL)
	if strings.Contains(host, ".") && net.ParseIP(host) == nil {
		return "Clinic bookings <bookings@" + host + ">", nil
	}
	if smtp {
		return "", fmt.Errorf("MAIL_FROM: required with SMTP_URL while PUBLIC_URL's host (%s) is not a domain name: set the clinic's sender, such as Praxis am Park <termine@praxis-am-park.de>", host)
	}
	return "Clinic bookings <bookings@mail-from.invalid>", nil
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "localhost"
	}
	return u.Hostname()
}

func smtpText(c *mail.Config) string {
	if c == nil {
		return "none: e-mails kept for the outbox page"
	}
	return c.String()
}

// trustedProxies reads TRUSTED_PROXIES: addresses and CIDR ranges, comma
// separated; bad names every entry that is neither.
func trustedProxies(list string) (ps []netip.Prefix, bad []string) {
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				bad = append(bad, fmt.Sprintf("TRUSTED_PROXIES: %q is neither an address nor a CIDR range (e.g. 10.0.0.7 or 10.0.0.0/24)", f))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		ps = append(ps, p.Masked())
	}
	return ps, bad
}
