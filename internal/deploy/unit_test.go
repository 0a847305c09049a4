package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unitBinary is the path the unit's ExecStart names.
const unitBinary = "/usr/local/bin/clinic"

// maxExposure is the highest `systemd-analyze security` score the unit may
// have (0 is locked down, 10 is exposed; "OK" ends at 2).
const maxExposure = 2.0

// analyzableUnit is a copy of clinic.service, in a folder of its own,
// whose ExecStart names an executable that exists here: verify refuses a
// unit whose program is missing, and the server need not be installed
// for it. The test binary stands in (verify only checks that the file is
// there and executable).
func analyzableUnit(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd; make test-image installs it)")
	}
	src, err := os.ReadFile("clinic.service")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "clinic.service")
	if err := os.WriteFile(unit, []byte(strings.ReplaceAll(string(src), unitBinary, self)), 0o644); err != nil {
		t.Fatal(err)
	}
	return unit
}

// TestUnitVerifies runs `systemd-analyze verify`, which exits 0 even for
// unknown keys and bad values: anything it prints fails the test.
func TestUnitVerifies(t *testing.T) {
	unit := analyzableUnit(t)
	out, err := exec.Command("systemd-analyze", "verify", unit).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

var exposureRe = regexp.MustCompile(`Overall exposure level for clinic\.service: ([0-9.]+)`)

// TestUnitExposure measures the unit's hardening with `systemd-analyze
// security`, offline (no running systemd needed).
func TestUnitExposure(t *testing.T) {
	unit := analyzableUnit(t)
	out, err := exec.Command("systemd-analyze", "security", "--offline=yes", "--no-pager", unit).CombinedOutput()
	m := exposureRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: %v, no exposure level in:\n%s", err, out)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("systemd-analyze security exposure of clinic.service: %.1f", score)
	if score > maxExposure {
		t.Errorf("exposure %.1f, want at most %.1f:\n%s", score, maxExposure, out)
	}
}

// TestUnitSettings reads the unit for the settings the hardening and the
// server's shutdown depend on; verify cannot tell a missing one.
func TestUnitSettings(t *testing.T) {
	keys := unitKeys(t, "clinic.service")
	want := map[string]string{
		"ExecStart":               unitBinary + " serve",
		"EnvironmentFile":         "/etc/clinic/clinic.env",
		"DynamicUser":             "yes",
		"NoNewPrivileges":         "yes",
		"CapabilityBoundingSet":   "",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"PrivateDevices":          "yes",
		"ProtectKernelTunables":   "yes",
		"ProtectKernelModules":    "yes",
		"ProtectKernelLogs":       "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"MemoryDenyWriteExecute":  "yes",
		"Restart":                 "on-failure",
		"StateDirectory":          "clinic",
	}
	for k, v := range want {
		if got, ok := keys[k]; !ok || got[0] != v {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
	if f := keys["SystemCallFilter"]; len(f) == 0 || f[0] != "@system-service" {
		t.Errorf("SystemCallFilter=%q, want @system-service first", f)
	}
	// The server takes SHUTDOWN_TIMEOUT_SECONDS (10 by default) to drain
	// requests, then up to 10 s for the e-mails being sent.
	stop, err := time.ParseDuration(strings.TrimSpace(first(keys["TimeoutStopSec"])))
	if err != nil || stop <= 20*time.Second {
		t.Errorf("TimeoutStopSec=%q (%v), want more than the 20 s the server may take to stop", keys["TimeoutStopSec"], err)
	}
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// unitKeys is every Key=value of a unit file, values in order of appearance.
func unitKeys(t *testing.T, name string) map[string][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '[' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			keys[k] = append(keys[k], v)
		}
	}
	return keys
}
