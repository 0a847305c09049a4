package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ensurePackages makes sure every file in want exists, installing the
// Debian packages that provide them with apt-get when we are root (CI,
// containers, a fresh machine). Anyone else is told the exact command.
func ensurePackages(what string, want []string, packages ...string) error {
	if len(missingFiles(want)) == 0 {
		return nil
	}
	install := "apt-get install -y --no-install-recommends " + strings.Join(packages, " ")
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s is not installed (missing %s): run `sudo %s`", what, strings.Join(missingFiles(want), ", "), install)
	}
	logf("%s is not installed; installing %s with apt-get", what, strings.Join(packages, " "))
	if err := loud(exec.Command("apt-get", "update")); err != nil {
		return err
	}
	cmd := exec.Command("apt-get", append([]string{"install", "-y", "--no-install-recommends"}, packages...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if err := loud(cmd); err != nil {
		return err
	}
	if missing := missingFiles(want); len(missing) > 0 {
		return fmt.Errorf("%s: still missing %s after `%s`", what, strings.Join(missing, ", "), install)
	}
	return nil
}

func missingFiles(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

// The browser tests drive Debian's Chromium, headless, and need a font to
// lay pages out the same way everywhere.
var browserFiles = []string{"/usr/bin/chromium", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"}

// ensureBrowser installs Chromium and its font for the browser tests.
func ensureBrowser() error {
	return ensurePackages("Chromium (for the browser tests)", browserFiles, "chromium", "fonts-dejavu-core")
}
