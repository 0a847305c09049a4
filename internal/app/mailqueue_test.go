package app

import (
	"strings"
	"testing"
)

// A test server's e-mails go through a queue named for its limit scope,
// so no test server sends another's; production's share the one queue,
// and a queue named by the options is kept as it is.
func TestMailQueue(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, ""},
		{Options{Mail: MailOptions{Queue: "mine"}, LimitScope: "scope:"}, "mine"},
		{Options{LimitScope: "6F1B0A7D-2C11:"}, "mail_6f1b0a7d_2c11"},
		{Options{LimitScope: long}, ("mail_" + long)[:64]},
	} {
		if got := mailQueue(c.o); got != c.want {
			t.Errorf("mailQueue(scope %q, queue %q) = %q, want %q", c.o.LimitScope, c.o.Mail.Queue, got, c.want)
		}
	}
}
