package config

import (
	"strings"
	"testing"
)

func TestLoadMailCap(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.MailsPerRecipient != 6 || c.MailsPerRecipientServer != 18 {
		t.Fatalf("mail caps by default: %d, %d", c.MailsPerRecipient, c.MailsPerRecipientServer)
	}
	if c, err = Load(env(map[string]string{"MAILS_PER_RECIPIENT": "100"})); err != nil || c.MailsPerRecipientServer != 300 {
		t.Fatalf("the server's cap follows the clinic's: %d, %v", c.MailsPerRecipientServer, err)
	}
	if c, err = Load(env(map[string]string{"MAILS_PER_RECIPIENT": "2", "MAILS_PER_RECIPIENT_SERVER": "5"})); err != nil || c.MailsPerRecipientServer != 5 {
		t.Fatalf("the server's cap set: %d, %v", c.MailsPerRecipientServer, err)
	}
	for want, vars := range map[string]map[string]string{
		"MAILS_PER_RECIPIENT":        {"MAILS_PER_RECIPIENT": "0"},
		"MAILS_PER_RECIPIENT_SERVER": {"MAILS_PER_RECIPIENT_SERVER": "none"},
		"MAILS_PER_RECIPIENT_SERVER=3 is below MAILS_PER_RECIPIENT=6": {"MAILS_PER_RECIPIENT_SERVER": "3"},
	} {
		if _, err := Load(env(vars)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
