package postgres

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ServerBinDir finds the directory with PostgreSQL 15's initdb, pg_ctl and
// postgres, for running a local server (cmd/devenv, the fault tests):
// Debian's versioned directory first, then pg_config --bindir, then PATH.
func ServerBinDir() (string, error) {
	dirs := []string{"/usr/lib/postgresql/15/bin"}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	if path, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(path))
	}
	for _, dir := range dirs {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "pg_ctl")) &&
			isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", errors.New("PostgreSQL 15 server binaries (initdb, pg_ctl, postgres) not found in " +
		"/usr/lib/postgresql/15/bin, `pg_config --bindir` or PATH: install postgresql-15, or set DATABASE_URL")
}

// isExecutable reports whether path is a regular file someone may run.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
