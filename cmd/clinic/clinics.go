package main

// `clinic clinic create|list` and `clinic staff reset-password|reset-2fa`:
// what an owner needs to start a clinic and sign in, without SQL.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/staff"
)

// connectMigrated opens a small pool on the database and applies the
// migrations, so these commands also work before the first `serve`.
func connectMigrated(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	return postgres.ConnectMigrated(ctx, cfg.DatabaseURL, 2, 0)
}

// flagError names the command-line flag of an invalid field: "--slug: ...".
func flagError(err error, flags map[string]string) error {
	ae := apperr.As(err)
	if ae == nil {
		return err
	}
	if name, ok := flags[ae.Field()]; ok {
		return fmt.Errorf("--%s: %s", name, ae.Message)
	}
	if ae.Code == clinics.CodeSlugTaken {
		return fmt.Errorf("--slug: %s", ae.Message)
	}
	if ae.Code == apperr.CodeEmailTaken {
		return fmt.Errorf("--%s: %s", flags["email"], ae.Message)
	}
	return errors.New(ae.Message)
}

// parseFlags parses args into fs and wants every flag of required set.
func parseFlags(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var missing []string
	for _, name := range required {
		if !set[name] {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: missing %s (see %s -h)", fs.Name(), strings.Join(missing, ", "), fs.Name())
	}
	return nil
}

func clinicCommand(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	sub := ""
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "create":
		return clinicCreate(ctx, cfg, args, stdout, stderr)
	case "list":
		return clinicList(ctx, cfg, args, stdout, stderr)
	default:
		return fmt.Errorf("clinic: want create or list, not %q", sub)
	}
}

func clinicCreate(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("clinic create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := clinics.Input{RetentionMonths: int32(cfg.RetentionMonths), MailRetentionDays: int32(cfg.MailRetentionDays)}
	var email string
	fs.StringVar(&in.Slug, "slug", "", "the clinic's address on the site, /c/<slug>: lower-case letters, digits and dashes (required)")
	fs.StringVar(&in.Name, "name", "", "the clinic's name (required)")
	fs.StringVar(&in.Timezone, "timezone", "", "IANA time zone of the clinic, e.g. Europe/Berlin (required)")
	fs.StringVar(&in.Address, "address", "", "the clinic's street address")
	fs.StringVar(&email, "admin-email", "", "e-mail address of the first admin (required)")
	fs.StringVar(&in.Language, "language", "en", "language of the pages: en or de")
	if err := parseFlags(fs, args, "slug", "name", "timezone", "admin-email"); err != nil {
		return err
	}
	flags := map[string]string{"slug": "slug", "name": "name", "timezone": "timezone", "language": "language", "email": "admin-email"}
	// Everything is checked before the database is reached.
	if _, err := staff.CheckEmail(email); err != nil {
		return flagError(err, flags)
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	var link staff.Link
	var admin staff.Account
	c, err := clinics.NewService(pool).Create(ctx, in, staff.ActorCLI, func(q *db.Queries, c clinics.Clinic) error {
		var err error
		admin, link, err = staff.CreateFirstAdmin(ctx, q, c.ID, email, time.Now())
		return err
	})
	if err != nil {
		return flagError(err, flags)
	}
	fmt.Fprintf(stdout, "Created the clinic %q (slug %s, %s, language %s): %s/c/%s\n",
		c.Name, c.Slug, c.Timezone, c.Language, cfg.PublicURL, c.Slug)
	fmt.Fprintf(stdout, "Its admin %s has no password yet. Open this link to choose one (it works once, for %s):\n\n  %s\n\n",
		admin.Email, hours(staff.LinkLifetime), link.URL(cfg.PublicURL))
	return nil
}

func hours(d time.Duration) string { return fmt.Sprintf("%d hours", int(d/time.Hour)) }

func clinicList(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("clinic list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	list, err := clinics.NewService(pool).Summaries(ctx)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "No clinics yet. Create one with: bin/clinic clinic create --slug ... --name ... --timezone ... --admin-email ...")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tNAME\tTIMEZONE\tLANGUAGE\tSTAFF")
	for _, c := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", c.Slug, c.Name, c.Timezone, c.Language, c.Staff)
	}
	return tw.Flush()
}

func staffCommand(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "reset-2fa" {
		return staffResetSecondFactor(ctx, cfg, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "reset-password" {
		return errors.New("staff: want reset-password or reset-2fa")
	}
	fs := flag.NewFlagSet("staff reset-password", flag.ContinueOnError)
	fs.SetOutput(stderr)
	email := fs.String("email", "", "the account's e-mail address (required)")
	slug := fs.String("clinic", "", "the slug of the account's clinic (optional; checked when given)")
	if err := parseFlags(fs, args[1:], "email"); err != nil {
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
	acc, link, err := staff.New(pool, nil, nil).ResetLink(ctx, *email, *slug, time.Now())
	if err != nil {
		return flagError(err, flags)
	}
	fmt.Fprintf(stdout, "A new sign-in link for %s (older unused links no longer work). It works once, for %s:\n\n  %s\n\n",
		acc.Email, hours(staff.LinkLifetime), link.URL(cfg.PublicURL))
	return nil
}
