package web_test

// A German clinic's waitlist names the type in German: the form, the page
// of the place, and the e-mail of the place, whatever the type is called
// in the language it was written in.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

func TestWaitlistInGermanNamesTheTypeInGerman(t *testing.T) {
	t.Parallel()
	a, srv := smtpApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	ctx := context.Background()
	if _, err := a.Pool.Exec(ctx, `UPDATE clinics SET language = 'de' WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE appointment_types SET translations = '{"de": {"name": "Erstgespräch"}}' WHERE id = $1`, typ.ID); err != nil {
		t.Fatal(err)
	}
	wantGerman := func(what, s string) {
		t.Helper()
		if !strings.Contains(s, "Erstgespräch") || strings.Contains(s, typ.Name) {
			t.Errorf("%s does not name the type in German only (Erstgespräch, not %s):\n%s", what, typ.Name, clip(strings.Join(strings.Fields(s), " "), 1500))
		}
	}
	cl := a.newClient(t)
	form := cl.Get(pwJoinPath(c, typ)).Want(200)
	wantGerman("the join form", form.Text("main")+" "+form.Text("title"))

	email := uniqueEmail("warte")
	today := time.Now().In(c.Loc)
	link := pwJoinNoJS(t, cl, c, typ, pwValues(c, "Lise Meitner", email, today, today.AddDate(0, 0, 5)))
	place := a.newClient(t).Get(link).Want(200)
	wantGerman("the place's page", place.Text("main")+" "+place.Text("title"))
	if s, _ := pwPlace(t, place); s["Was"] != "Erstgespräch" {
		t.Errorf("the place's summary says %q", s)
	}

	var letter testkit.ParsedMail
	for _, m := range srv.WaitFor(t, 1, 20*time.Second) {
		if p := testkit.ParseReceived(t, m); p.To == email {
			letter = p
		}
	}
	wantGerman("the e-mail's subject", letter.Subject)
	wantGerman("the e-mail's text", letter.Text)
	wantGerman("the e-mail's HTML", letter.HTML)
}
