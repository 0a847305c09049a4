package config

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestLoadSecretKeyAndMetricsAddr(t *testing.T) {
	t.Run("ShortSecretKeyIsRefused", func(t *testing.T) {
		_, err := Load(env(map[string]string{"SECRET_KEY": "too short"}))
		if err == nil || !strings.Contains(err.Error(), "SECRET_KEY") {
			t.Fatalf("err %v, want one naming SECRET_KEY", err)
		}
	})
	t.Run("LongSecretKeyIsKeptAndNeverLogged", func(t *testing.T) {
		key := strings.Repeat("k", 32)
		c, err := Load(env(map[string]string{"SECRET_KEY": key, "METRICS_ADDR": "127.0.0.1:9100"}))
		if err != nil {
			t.Fatal(err)
		}
		if c.SecretKey != key || c.MetricsAddr != "127.0.0.1:9100" {
			t.Fatalf("secret %q, metrics %q", c.SecretKey, c.MetricsAddr)
		}
		if logged := fmt.Sprint(slog.AnyValue(c).Resolve()); strings.Contains(logged, key) {
			t.Fatalf("the settings as logged show the secret: %s", logged)
		}
	})
}
