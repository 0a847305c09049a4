package holds

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestCooldownIsSetReadAndClearedByBooking(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	booking := uuid.New()
	t.Cleanup(func() {
		f.rdb.Del(ctx, cooldownKey(f.clinic, "client-a", f.atid), cooldownReverseKey(f.clinic, booking))
	})

	if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid); d != 0 || err != nil {
		t.Fatalf("before any booking: %s, %v; want 0", d, err)
	}
	if err := f.s.SetCooldown(ctx, f.clinic, "client-a", f.atid, booking, time.Hour); err != nil {
		t.Fatal(err)
	}
	d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid)
	if err != nil || d <= 59*time.Minute || d > time.Hour {
		t.Fatalf("remaining = %s, %v; want ~1h", d, err)
	}
	if pttl := f.rdb.PTTL(ctx, cooldownReverseKey(f.clinic, booking)).Val(); pttl <= 59*time.Minute {
		t.Fatalf("reverse key PTTL %s, want the cooldown's", pttl)
	}
	if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", uuid.New()); err != nil || d != 0 {
		t.Fatalf("another type has cooldown %s (%v)", d, err)
	}
	if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-b", f.atid); err != nil || d != 0 {
		t.Fatalf("another client has cooldown %s (%v)", d, err)
	}

	if err := f.s.ClearCooldown(ctx, f.clinic, booking); err != nil {
		t.Fatal(err)
	}
	if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid); d != 0 || err != nil {
		t.Fatalf("after clearing: %s, %v; want 0", d, err)
	}
	if n := f.rdb.Exists(ctx, cooldownReverseKey(f.clinic, booking)).Val(); n != 0 {
		t.Fatal("reverse key left behind")
	}
	if err := f.s.ClearCooldown(ctx, f.clinic, booking); err != nil {
		t.Fatalf("clearing twice: %v", err)
	}
	if err := f.s.ClearCooldown(ctx, f.clinic, uuid.New()); err != nil {
		t.Fatalf("clearing an unknown booking: %v", err)
	}
}

func TestSetCooldownOfZeroIsANoOp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	booking := uuid.New()
	for _, d := range []time.Duration{0, -time.Minute} {
		if err := f.s.SetCooldown(ctx, f.clinic, "client-a", f.atid, booking, d); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.rdb.Exists(ctx, cooldownKey(f.clinic, "client-a", f.atid), cooldownReverseKey(f.clinic, booking)).Val(); n != 0 {
		t.Fatalf("%d cooldown keys written for d <= 0", n)
	}
}

func TestCancellingAnEarlierBookingKeepsALaterBookingsCooldown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	first, second := uuid.New(), uuid.New()
	t.Cleanup(func() {
		f.rdb.Del(ctx, cooldownKey(f.clinic, "client-a", f.atid), cooldownReverseKey(f.clinic, first), cooldownReverseKey(f.clinic, second))
	})
	if err := f.s.SetCooldown(ctx, f.clinic, "client-a", f.atid, first, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SetCooldown(ctx, f.clinic, "client-a", f.atid, second, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ClearCooldown(ctx, f.clinic, first); err != nil {
		t.Fatal(err)
	}
	if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid); err != nil || d == 0 {
		t.Fatalf("cancelling the first booking lifted the second booking's cooldown (%v)", err)
	}
	if err := f.s.ClearCooldown(ctx, f.clinic, second); err != nil {
		t.Fatal(err)
	}
	if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid); err != nil || d != 0 {
		t.Fatalf("cooldown %s left after cancelling both (%v)", d, err)
	}
}

// The package must never enumerate keys: SCAN and KEYS are O(keyspace) and
// not Cluster-friendly. (KEYS[...] in Lua is the script's argument table,
// not the command.)
func TestPackageUsesNoScanOrKeysCommands(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := regexp.MustCompile(`\.(Keys|Scan|SScan|HScan|ZScan|ScanType)\(|(?i:'(keys|scan|sscan|hscan|zscan)'|"(keys|scan|sscan|hscan|zscan)")`)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if m := forbidden.Find(src); m != nil {
			t.Errorf("%s uses %s", name, m)
		}
	}
}
