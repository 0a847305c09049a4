package main

// `clinic patient erase`: a patient's details erased everywhere, or the
// ledger of erasures applied again after a restore of the database.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/platform/redisx"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/secret"
)

func patientCommand(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	sub := ""
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "erase":
		return patientErase(ctx, cfg, args, stdout, stderr)
	case "export":
		return patientExport(ctx, cfg, args, stdout, stderr)
	default:
		return fmt.Errorf("patient: want erase or export, not %q", sub)
	}
}

func patientErase(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("patient erase", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slug := fs.String("clinic", "", "the slug of the patient's clinic")
	email := fs.String("email", "", "the patient's e-mail address")
	phone := fs.String("phone", "", "the patient's phone number (read in the clinic's country without a country code)")
	yes := fs.Bool("yes", false, "erase without asking: required, an erasure cannot be undone")
	replay := fs.Bool("replay", false, "apply every entry of the ledger of erasures again (after a restore of the database)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !*replay {
		switch {
		case *slug == "":
			return errors.New("patient erase: missing --clinic (or --replay)")
		case *email == "" && *phone == "":
			return errors.New("patient erase: want --email or --phone")
		case !*yes:
			return errors.New("patient erase: an erasure cannot be undone; add --yes")
		}
	}
	svc, done, err := privacyService(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer done()
	if *replay {
		return printReplay(ctx, svc, stdout)
	}
	c, err := clinics.NewService(svc.Pool()).BySlug(ctx, *slug)
	if err != nil {
		return fmt.Errorf("--clinic: no clinic %q", *slug)
	}
	n, err := svc.EraseByCommand(ctx, c.ID, *email, *phone)
	if err != nil {
		return flagError(err, map[string]string{"email": "email", "phone": "phone"})
	}
	fmt.Fprintf(stdout, "Erased the patient at %s: %d bookings (%d future ones cancelled), %d e-mails, %d waitlist places, "+
		"%d manage links, %d stored answers, %d audit rows cleaned, %d sessions, %d Redis keys.\n",
		c.Slug, n.Bookings, n.Cancelled, n.Messages, n.Places, n.Links, n.Answers, n.Audit, n.Sessions, n.RedisKeys)
	if p := svc.Ledger().Path(); p != "" {
		fmt.Fprintf(stdout, "The ledger of erasures (%s) has its entry.\n", p)
	}
	return nil
}

func printReplay(ctx context.Context, svc *privacy.Service, stdout io.Writer) error {
	start := time.Now()
	r, err := svc.Replay(ctx, true)
	if err != nil {
		return err
	}
	if r.RepairFailed != nil {
		fmt.Fprintf(stdout, "The ledger's file could not be given the database's entries: %v\n", r.RepairFailed)
	}
	fmt.Fprintf(stdout, "Replayed the ledger of erasures (%s): %d entries, %d found something and erased it again, %d of another key, %d added to the file, in %s.\n",
		svc.Ledger().Path(), r.Entries, r.Matched, r.OtherKey, r.Repaired, time.Since(start).Round(time.Millisecond))
	if !r.Erased.Zero() {
		n := r.Erased
		fmt.Fprintf(stdout, "Erased again: %d bookings (%d future ones cancelled), %d e-mails, %d waitlist places, %d sessions.\n",
			n.Bookings, n.Cancelled, n.Messages, n.Places, n.Sessions)
	}
	return nil
}

// privacyService builds the program as the server does (the booking
// gate with its e-mails and waitlist hooks, Redis), for one command.
func privacyService(ctx context.Context, cfg config.Config, stderr io.Writer) (*privacy.Service, func(), error) {
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	key, err := secret.Load(ctx, pool, []byte(cfg.SecretKey))
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("server secret: %w", err)
	}
	rdb, err := redisx.Connect(cfg.RedisURL, 4)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	logger := newLogger(cfg, stderr)
	built := app.Build(pool, rdb, logger, app.Options{SecretKey: key, ErasureLedger: cfg.ErasureLedger})
	return built.Deps.Privacy, func() { _ = rdb.Close(); pool.Close() }, nil
}

// replayErasures applies the ledger's erasures that the database lacks
// (it was restored from a backup older than them) before serving.
func replayErasures(ctx context.Context, svc *privacy.Service, logger *slog.Logger) error {
	start := time.Now()
	r, err := svc.Replay(ctx, false)
	if err != nil {
		return fmt.Errorf("replay the ledger of erasures: %w", err)
	}
	logger.Info("ledger of erasures replayed", "entries", r.Entries, "checked", r.Checked, "matched", r.Matched,
		"other_key", r.OtherKey, "repaired", r.Repaired, "took", time.Since(start))
	if r.RepairFailed != nil {
		logger.Warn("the ledger of erasures' file could not be given the database's entries; erasures will fail until it is writable", "err", r.RepairFailed)
	}
	if r.OtherKey > 0 {
		logger.Warn("entries of the ledger of erasures were made with another key and match nothing (SECRET_KEY changed, or a database restored from before its first start)", "entries", r.OtherKey)
	}
	return nil
}
