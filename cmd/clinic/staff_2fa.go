package main

// `clinic staff reset-2fa`: the way back in for an account whose phone is
// lost when no other admin of its clinic can reset it.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"

	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/web/httpx"
)

func staffResetSecondFactor(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("staff reset-2fa", flag.ContinueOnError)
	fs.SetOutput(stderr)
	email := fs.String("email", "", "the account's e-mail address (required)")
	slug := fs.String("clinic", "", "the slug of the account's clinic (required)")
	if err := parseFlags(fs, args, "clinic", "email"); err != nil {
		return err
	}
	flags := map[string]string{"email": "email"}
	if _, err := staff.CheckEmail(*email); err != nil {
		return flagError(err, flags)
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	acc, had, err := staff.New(pool, nil, nil).ResetSecondFactorByEmail(ctx, *email, *slug, time.Now())
	if err != nil {
		return flagError(err, flags)
	}
	// The reset ended the sessions of the account's list; these are any
	// signed in before the list existed. No cleanup runs in this process.
	sm := scs.New()
	sm.Store = pgxstore.NewWithCleanupInterval(pool, 0)
	if _, err := httpx.EndStaffSessions(ctx, sm, acc.ID, ""); err != nil {
		return fmt.Errorf("end the account's sessions: %w", err)
	}
	if had {
		fmt.Fprintf(stdout, "The second factor of %s at %s is reset: its app's codes and its recovery codes no longer work, and its sessions were ended.\n", acc.Email, *slug)
	} else {
		fmt.Fprintf(stdout, "%s at %s had no second factor; its sessions were ended all the same.\n", acc.Email, *slug)
	}
	fmt.Fprintln(stdout, "It signs in with its password and sets up a second factor again on Your account (at once when the clinic requires one).")
	return nil
}
