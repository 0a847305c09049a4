package main

// `clinic retention run [--clinic SLUG]`: what the daily job does, now,
// and what it did, in counts.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/privacy"
)

func retentionCommand(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "run" {
		return errors.New("retention: want run")
	}
	fs := flag.NewFlagSet("retention run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slug := fs.String("clinic", "", "the slug of one clinic (default: every clinic, then the server's expired sessions and records)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	r := privacy.NewRetention(pool, privacy.RetentionConfig{
		OrphanJobsAfter: time.Duration(cfg.MailRetentionDays) * 24 * time.Hour,
	})
	start := time.Now()
	rep, err := r.Run(ctx, *slug)
	if err != nil {
		return flagError(err, map[string]string{"clinic": "clinic"})
	}
	for _, c := range rep.Clinics {
		fmt.Fprintf(stdout, "%s: %s\n", c.Slug, countsLine(c.Counts()))
	}
	if *slug == "" {
		fmt.Fprintf(stdout, "server: %s\n", countsLine(rep.Counts()))
	}
	fmt.Fprintf(stdout, "took %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// countsLine says what was anonymised and deleted, leaving out the kinds
// of which nothing was.
func countsLine(cs []privacy.Count) string {
	var anon, del []string
	for _, c := range cs {
		if c.N == 0 {
			continue
		}
		s := fmt.Sprintf("%d %s", c.N, strings.ReplaceAll(c.Kind, "_", " "))
		if c.Anonymised {
			anon = append(anon, s)
		} else {
			del = append(del, s)
		}
	}
	var parts []string
	if len(anon) > 0 {
		parts = append(parts, "anonymised "+strings.Join(anon, ", "))
	}
	if len(del) > 0 {
		parts = append(parts, "deleted "+strings.Join(del, ", "))
	}
	if len(parts) == 0 {
		return "nothing past its periods"
	}
	return strings.Join(parts, "; ")
}
