package outbox_test

import (
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

// A sent e-mail's footer links its clinic's privacy page, in both parts.
func TestMailLinksThePrivacyPage(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	r.book(t, r.at(3, 10, 0), "pia@example.org")
	got := r.smtp.WaitFor(t, 1, 20*time.Second)
	m := testkit.ParseReceived(t, got[0])
	want := "http://clinic.test/c/" + r.clinic.Slug + "/privacy"
	if text := strings.ReplaceAll(m.Text, "\r\n", "\n"); !strings.Contains(text, "How we handle your data:\n"+want) || !strings.Contains(m.HTML, `href="`+want+`"`) {
		t.Errorf("the e-mail does not link %s:\n%s", want, m.Text)
	}
}
