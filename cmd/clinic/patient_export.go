package main

// `clinic patient export`: one patient's data at a clinic, as the JSON
// document an admin downloads from the staff pages.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/privacy"
)

// patientExport prints the patient's export to stdout and what it
// counted to stderr; the export's audit row names the command line.
func patientExport(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("patient export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slug := fs.String("clinic", "", "the slug of the patient's clinic (required)")
	email := fs.String("email", "", "the patient's e-mail address, any spelling (this or --phone)")
	phone := fs.String("phone", "", "the patient's phone number, any spelling (this or --email)")
	if err := parseFlags(fs, args, "clinic"); err != nil {
		return err
	}
	if *email == "" && *phone == "" {
		return errors.New("patient export: give --email or --phone (see patient export -h)")
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	c, err := db.New(pool).ClinicGetBySlug(ctx, *slug)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("--clinic: no clinic %q", *slug)
	}
	if err != nil {
		return err
	}
	x, err := privacy.NewExporter(pool).ExportByOperator(ctx, c.ID, *email, *phone)
	if err != nil {
		return flagError(err, map[string]string{"email": "email", "phone": "phone"})
	}
	body, err := x.JSON()
	if err != nil {
		return err
	}
	if _, err := stdout.Write(body); err != nil {
		return err
	}
	n := x.Counts()
	fmt.Fprintf(stderr, "exported: %d bookings, %d e-mails, %d waitlist places, %d audit entries; export %s is in the audit log\n",
		n.Bookings, n.Emails, n.WaitlistPlaces, n.AuditEntries, x.ID)
	return nil
}
