package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.DatabaseURL != DefaultDatabaseURL || c.RedisURL != DefaultRedisURL || c.DBMaxConns != 20 || !c.MigrateOnStart {
		t.Fatalf("defaults: %+v", c)
	}
	if c.HoldsPerMinute != 30 || c.APIHoldsPerMinute != 120 || c.MovesPerMinute != 60 || c.LoginsPerMinute != 5 {
		t.Fatalf("rate limits are on by default: %+v", c)
	}
	if c.StreamsPerAddress != 50 {
		t.Fatalf("streams per address by default: %d, want 50", c.StreamsPerAddress)
	}
	if c.MetricsPublic || c.MetricsAddr != "" {
		t.Fatalf("metrics served by default: public %v, address %q", c.MetricsPublic, c.MetricsAddr)
	}
}

func TestStreamAndMetricsSettings(t *testing.T) {
	c, err := Load(env(map[string]string{"STREAMS_PER_ADDRESS": "5000", "METRICS_PUBLIC": "true", "METRICS_ADDR": "127.0.0.1:9090"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.StreamsPerAddress != 5000 || !c.MetricsPublic || c.MetricsAddr != "127.0.0.1:9090" {
		t.Fatalf("settings: streams %d, public %v, address %q", c.StreamsPerAddress, c.MetricsPublic, c.MetricsAddr)
	}
	_, err = Load(env(map[string]string{"STREAMS_PER_ADDRESS": "0", "METRICS_PUBLIC": "sometimes"}))
	for _, name := range []string{"STREAMS_PER_ADDRESS", "METRICS_PUBLIC"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestLoadNamesEveryBadSetting(t *testing.T) {
	_, err := Load(env(map[string]string{
		"DB_MAX_CONNS":         "lots",
		"LOG_LEVEL":            "chatty",
		"MIGRATE_ON_START":     "maybe",
		"DATABASE_URL":         "mysql://x",
		"API_HOLDS_PER_MINUTE": "0",
		"TRUSTED_PROXIES":      "10.0.0.1, the-load-balancer",
	}))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, name := range []string{"DB_MAX_CONNS", "LOG_LEVEL", "MIGRATE_ON_START", "DATABASE_URL", "API_HOLDS_PER_MINUTE", "TRUSTED_PROXIES: \"the-load-balancer\""} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestTrustedProxiesAreAddressesAndRanges(t *testing.T) {
	c, err := Load(env(map[string]string{"TRUSTED_PROXIES": " 10.0.0.7, 192.168.1.0/24,fd00::1 ,"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.7/32"), netip.MustParsePrefix("192.168.1.0/24"), netip.MustParsePrefix("fd00::1/128")}
	if !slices.Equal(c.TrustedProxies, want) {
		t.Fatalf("trusted proxies %v, want %v", c.TrustedProxies, want)
	}
	if c, _ := Load(env(nil)); len(c.TrustedProxies) != 0 {
		t.Fatalf("trusted by default: %v", c.TrustedProxies)
	}
}

func TestMaskHidesPasswords(t *testing.T) {
	got := Mask("postgres://app:s3cret@db:5432/clinic")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "app:xxxxx@db") {
		t.Fatalf("got %q", got)
	}
}

func TestLoadHoldLimits(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HoldsPerAddress != 4 || c.HoldMaxLife.Seconds() != 600 || c.HeartbeatsPerMin != 120 {
		t.Fatalf("hold limits by default: %d, %s, %d", c.HoldsPerAddress, c.HoldMaxLife, c.HeartbeatsPerMin)
	}
	_, err = Load(env(map[string]string{
		"HOLDS_PER_ADDRESS":     "0",
		"HEARTBEATS_PER_MINUTE": "many",
		"HOLD_TTL_SECONDS":      "60",
		"HOLD_MAX_SECONDS":      "30",
	}))
	for _, name := range []string{"HOLDS_PER_ADDRESS", "HEARTBEATS_PER_MINUTE", "HOLD_MAX_SECONDS=30 is below HOLD_TTL_SECONDS=60"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestLoadVerificationLimits(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.BookingsPerAddress != 3 || c.CodesPerRecipient != 5 {
		t.Fatalf("verification limits by default: %d, %d", c.BookingsPerAddress, c.CodesPerRecipient)
	}
	_, err = Load(env(map[string]string{"BOOKINGS_PER_ADDRESS": "0", "CODES_PER_RECIPIENT": "5000"}))
	for _, name := range []string{"BOOKINGS_PER_ADDRESS", "CODES_PER_RECIPIENT"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}
