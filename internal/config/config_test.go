package config

import (
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
}

func TestLoadNamesEveryBadSetting(t *testing.T) {
	_, err := Load(env(map[string]string{
		"DB_MAX_CONNS":         "lots",
		"LOG_LEVEL":            "chatty",
		"MIGRATE_ON_START":     "maybe",
		"DATABASE_URL":         "mysql://x",
		"API_HOLDS_PER_MINUTE": "0",
	}))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, name := range []string{"DB_MAX_CONNS", "LOG_LEVEL", "MIGRATE_ON_START", "DATABASE_URL", "API_HOLDS_PER_MINUTE"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestMaskHidesPasswords(t *testing.T) {
	got := Mask("postgres://app:s3cret@db:5432/clinic")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "app:xxxxx@db") {
		t.Fatalf("got %q", got)
	}
}
