package config

import (
	"strings"
	"testing"
)

func TestLoadRetention(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.RetentionMonths != 12 || c.MailRetentionDays != 30 {
		t.Fatalf("retention by default: %d months, %d days", c.RetentionMonths, c.MailRetentionDays)
	}
	if c, err = Load(env(map[string]string{"RETENTION_MONTHS": "120", "MAIL_RETENTION_DAYS": "1"})); err != nil || c.RetentionMonths != 120 || c.MailRetentionDays != 1 {
		t.Fatalf("retention set: %d months, %d days, %v", c.RetentionMonths, c.MailRetentionDays, err)
	}
	for name, v := range map[string]string{"RETENTION_MONTHS": "0", "MAIL_RETENTION_DAYS": "366"} {
		if _, err := Load(env(map[string]string{name: v})); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: error %v does not name it", name, v, err)
		}
	}
	if _, err := Load(env(map[string]string{"RETENTION_MONTHS": "121"})); err == nil {
		t.Error("RETENTION_MONTHS=121 accepted")
	}
}
