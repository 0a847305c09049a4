// Command clinic is the booking server: `clinic serve` (the default),
// `clinic migrate [up|down|status]`, `clinic seed`, `clinic clinic
// create|list`, `clinic staff reset-password|reset-2fa`, `clinic retention
// run`, `clinic patient erase|export` and `clinic healthcheck` (the
// container probe).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	_ "net/http/pprof" // served only on DEBUG_ADDR
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // clinics' zones must resolve even on a machine without /usr/share/zoneinfo

	"github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/platform/redisx"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/seed"
	"github.com/clinic/booking/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "clinic:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stderr)
	switch cmd {
	case "serve":
		return serve(ctx, cfg, logger, args)
	case "migrate":
		return migrate(ctx, cfg, logger, args, stdout)
	case "seed":
		return seedDemo(ctx, cfg, getenv, stdout)
	case "clinic":
		return clinicCommand(ctx, cfg, args, stdout, stderr)
	case "staff":
		return staffCommand(ctx, cfg, args, stdout, stderr)
	case "retention":
		return retentionCommand(ctx, cfg, args, stdout, stderr)
	case "patient":
		return patientCommand(ctx, cfg, args, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, cfg.Addr, args, stdout)
	default:
		return fmt.Errorf("unknown command %q: want serve, migrate, seed, clinic, staff, retention, patient or healthcheck", cmd)
	}
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func serve(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	noMigrate := fs.Bool("no-migrate", !cfg.MigrateOnStart, "do not apply migrations at start")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger.Info("starting", "config", cfg)

	// A multi-host DATABASE_URL with target_session_attrs=read-write
	// reaches the primary of a formation; failover notices when that
	// changes.
	failover := postgres.NewFailover(logger)
	pool, err := postgres.ConnectFollowing(ctx, cfg.DatabaseURL, cfg.DBMaxConns, cfg.DBMinConns, failover)
	if err != nil {
		return err
	}
	defer pool.Close()
	if !*noMigrate {
		if err := postgres.Migrate(ctx, pool, logger); err != nil {
			return err
		}
	}
	// Every instance signs with the same key: SECRET_KEY, or the one kept in
	// PostgreSQL.
	key, err := secret.Load(ctx, pool, []byte(cfg.SecretKey))
	if err != nil {
		return fmt.Errorf("server secret: %w", err)
	}
	rdb, err := redisx.Connect(cfg.RedisURL, cfg.RedisPoolSize)
	if err != nil {
		return err
	}
	defer rdb.Close()
	if err := redisx.Ping(ctx, rdb); err != nil {
		// Bookings stay correct without Redis; say so and serve.
		logger.Warn("redis unreachable at start; holds answer 503 until it is back", "err", err)
	}

	mailOpts, err := mailOptions(cfg)
	if err != nil {
		return err
	}
	built := app.Build(pool, rdb, logger, app.Options{
		Mail:              mailOpts,
		WaitlistOfferFor:  cfg.WaitlistOfferFor,
		MailRetentionDays: cfg.MailRetentionDays,
		HoldTTL:           cfg.HoldTTL,
		TimeslotCacheTTL:  cfg.TimeslotCacheTTL,
		NoTimeslotCache:   cfg.TimeslotCacheTTL == 0,
		SecureCookies:     cfg.SecureCookies,
		PublicURL:         publicURLIfSet(cfg),
		SecretKey:         key,
		MetricsAddr:       cfg.MetricsAddr,
		MetricsPublic:     cfg.MetricsPublic,
		WarnHeapMB:        cfg.WarnHeapMB,
		WarnStreams:       cfg.WarnStreams,

		HoldsPerMinute:        cfg.HoldsPerMinute,
		APIHoldsPerMinute:     cfg.APIHoldsPerMinute,
		HoldsPerAddress:       cfg.HoldsPerAddress,
		HoldMaxLife:           cfg.HoldMaxLife,
		BookingsPerAddress:    cfg.BookingsPerAddress,
		StreamsPerAddress:     cfg.StreamsPerAddress,
		CodesPerRecipient:     cfg.CodesPerRecipient,
		CodesPerAddress:       cfg.CodesPerAddress,
		CodeGuessesPerAddress: cfg.CodeGuessesPerAddress,
		MovesPerMinute:        cfg.MovesPerMinute,
		LoginsPerMinute:       cfg.LoginsPerMinute,
		CodeTriesPerHour:      cfg.CodeTriesPerHour,

		StaffWritesPerMinute:  cfg.StaffWritesPerMin,
		HeartbeatsPerMinute:   cfg.HeartbeatsPerMin,
		FeedRefresh:           cfg.FeedRefresh,
		FeedRequestsPerMinute: cfg.FeedRequestsPerMinute,
		TrustedProxies:        cfg.TrustedProxies,
		ErasureLedger:         cfg.ErasureLedger,
		Failover:              failover,
	})
	if err := replayErasures(ctx, built.Deps.Privacy, logger); err != nil {
		return err
	}
	built.RunBackground(ctx)
	if addr := os.Getenv("DEBUG_ADDR"); addr != "" {
		// pprof on a separate, private address, only when asked for.
		go func() {
			logger.Info("debug server", "addr", addr)
			if err := http.ListenAndServe(addr, http.DefaultServeMux); err != nil {
				logger.Warn("debug server", "err", err)
			}
		}()
	}
	srv := web.New(built.Deps, cfg.Addr)
	err = srv.ListenAndServe(ctx, cfg.ShutdownTimeout)
	// The sends under way finish before the pool closes.
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := built.Deps.Outbox.Stop(stop); serr != nil {
		logger.Warn("outbox stop", "err", serr)
	}
	return err
}

func migrate(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout io.Writer) error {
	direction := "up"
	if len(args) > 0 {
		direction = args[0]
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, 2, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	p, err := postgres.NewMigrator(pool, logger)
	if err != nil {
		return err
	}
	defer p.Close()
	switch direction {
	case "up":
		res, err := p.Up(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied %d migration(s)\n", len(res))
		n, err := postgres.MigrateQueue(ctx, pool, logger)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied %d job queue migration(s)\n", n)
	case "down":
		res, err := p.Down(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rolled back %s\n", res.Source.Path)
	case "reset":
		if err := postgres.ResetQueue(ctx, pool); err != nil {
			return err
		}
		if _, err := p.DownTo(ctx, 0); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "rolled back every migration and the job queue's")
	case "status":
		st, err := p.Status(ctx)
		if err != nil {
			return err
		}
		for _, s := range st {
			applied := "pending"
			if !s.AppliedAt.IsZero() {
				applied = s.AppliedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(stdout, "%05d %-40s %s\n", s.Source.Version, s.Source.Path, applied)
		}
	default:
		return errors.New("migrate: want up, down, reset or status")
	}
	return nil
}

func seedDemo(ctx context.Context, cfg config.Config, getenv func(string) string, stdout io.Writer) error {
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	password := getenv("SEED_ADMIN_PASSWORD")
	if password == "" {
		password = "demo-clinic-admin"
	}
	d, err := seed.Run(ctx, pool, password, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Seeded %q (slug %s, %s): %d specialists, %d appointment types.\n",
		d.Clinic.Name, d.Clinic.Slug, d.Clinic.Timezone, len(d.Specialists), len(d.Types))
	if d.AdminCreated {
		fmt.Fprintf(stdout, "Staff admin: %s / %s\n", d.AdminEmail, d.AdminPassword)
	} else {
		fmt.Fprintf(stdout, "Staff admin: %s (already existed; password unchanged, %q when first seeded)\n", d.AdminEmail, d.AdminPassword)
	}
	return nil
}

// publicURLIfSet is PUBLIC_URL when the operator set it, else "": the
// server then builds links from each request (a phone scanning a kiosk's
// QR code cannot reach "localhost").
func publicURLIfSet(cfg config.Config) string {
	if cfg.PublicURLSet {
		return cfg.PublicURL
	}
	return ""
}

// mailOptions sends over SMTP_URL when it is set; without it, e-mails are
// kept for the staff's outbox page.
func mailOptions(cfg config.Config) (app.MailOptions, error) {
	o := app.MailOptions{
		LinkBase: cfg.PublicURL, From: cfg.MailFrom, Workers: cfg.MailWorkers,
		Retry: outbox.Retry{Base: cfg.MailRetry},
		Cap:   outbox.Cap{PerClinic: cfg.MailsPerRecipient, Server: cfg.MailsPerRecipientServer},
	}
	if cfg.SMTP == nil {
		return o, nil
	}
	s, err := mail.NewSMTP(*cfg.SMTP, cfg.MailFrom)
	if err != nil {
		return o, fmt.Errorf("configuration: %w", err)
	}
	o.Sender = s
	return o, nil
}
