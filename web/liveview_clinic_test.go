package web_test

// The clinic page's listing kept in memory: the answer is the source's,
// byte for byte, in every form of the request, costs nothing at
// PostgreSQL or Redis, and a change of the set-up made on any instance
// retires it.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/testkit"
)

// The clinic page with and without a client cookie, in English and German
// (the language cookie, Accept-Language, the switcher's ?lang=), as htmx
// asks for it or not, is answered from memory, and that answer is the
// source's, byte for byte, before and after a staff edit.
func TestClinicPageFromMemoryEqualsTheSource(t *testing.T) {
	t.Parallel()
	a, n := countingApp(t)
	c := a.patientClinic(t)
	slow := sourceServer(t, a)
	page := "/c/" + c.Slug
	client := cookieHeader(a.do(t, "GET", c.BookPath(c.Type0()), nil).Want(http.StatusOK))
	if !strings.Contains(client, "=") {
		t.Fatal("the type page set no client cookie")
	}
	type form struct{ path, cookie, lang, hx string }
	var forms []form
	for _, path := range []string{page, page + "?lang=de", page + "?from=list"} {
		for _, ck := range []string{"", client, "lang=de", client + "; lang=en"} {
			for _, al := range []string{"", "de-DE,de;q=0.9", "en-GB,en;q=0.8"} {
				for _, hx := range []string{"", "true"} {
					forms = append(forms, form{path, ck, al, hx})
				}
			}
		}
	}
	compare := func(stage, name string) {
		t.Helper()
		bodies := map[string]bool{}
		for _, f := range forms {
			hdr := []string{"Cookie", f.cookie, "Accept-Language", f.lang, "HX-Request", f.hx, "Accept", browserAccept}
			a.do(t, "GET", f.path, nil, hdr...).Want(http.StatusOK) // keeps the listing
			hits, before := liveHits(t, a, "clinic"), n.both()
			fast := a.do(t, "GET", f.path, nil, hdr...).Want(http.StatusOK)
			if liveHits(t, a, "clinic") != hits+1 {
				t.Fatalf("%s: %s (%+v) was not answered from memory", stage, f.path, f)
			}
			if cost := n.both() - before; cost != 0 {
				t.Fatalf("%s: %s (%+v) from memory cost %d queries and Redis commands, want 0", stage, f.path, f, cost)
			}
			src := exchange(t, http.DefaultClient, newRequest(t, "GET", slow+f.path, nil, hdr...)).Want(http.StatusOK)
			for _, h := range []string{"ETag", "Content-Type", "Cache-Control"} {
				if fast.Header.Get(h) != src.Header.Get(h) {
					t.Fatalf("%s: %s (%+v): %s %q from memory, %q from the source", stage, f.path, f, h, fast.Header.Get(h), src.Header.Get(h))
				}
			}
			if strings.Join(fast.Header.Values("Vary"), ",") != strings.Join(src.Header.Values("Vary"), ",") {
				t.Fatalf("%s: %s (%+v): Vary %q from memory, %q from the source", stage, f.path, f, fast.Header.Values("Vary"), src.Header.Values("Vary"))
			}
			if fast.Body != src.Body {
				t.Fatalf("%s: %s (%+v): the kept answer differs from the source's\nmemory:\n%s\nsource:\n%s",
					stage, f.path, f, clip(fast.Body, 3000), clip(src.Body, 3000))
			}
			if !strings.Contains(src.Body, name) {
				t.Fatalf("%s: %s (%+v) does not list %q: nothing compared\n%s", stage, f.path, f, name, clip(src.Body, 3000))
			}
			bodies[fast.Body] = true
		}
		if len(bodies) < 4 { // two languages, htmx or not
			t.Fatalf("%s: the forms gave %d different pages: the languages or htmx were not told apart", stage, len(bodies))
		}
	}
	compare("before any edit", c.Type0().Name)

	// An edit on this instance shows on the very next request.
	renamed := renameType(t, a, c, "Erstgespräch")
	if !strings.Contains(a.do(t, "GET", page, nil).Want(http.StatusOK).Body, renamed) {
		t.Fatal("the request after the edit does not show it")
	}
	compare("after an edit", renamed)
}

// A staff edit made on another instance (a type's name, the clinic's
// name) shows on this instance's clinic page as soon as it heard the
// clinic's calendar event, and the page is served from memory again after.
func TestClinicPageShowsAnEditOfAnotherInstance(t *testing.T) {
	t.Parallel()
	a, b := newApp(t), newApp(t)
	c := a.patientClinic(t)
	page := "/c/" + c.Slug
	a.do(t, "GET", page, nil).Want(http.StatusOK)
	hits := liveHits(t, a, "clinic")
	if !strings.Contains(a.do(t, "GET", page, nil).Want(http.StatusOK).Body, c.Type0().Name) || liveHits(t, a, "clinic") != hits+1 {
		t.Fatal("the clinic page read again was not answered from memory")
	}

	renamed := renameType(t, b, c, "Vorsorge")
	testkit.WaitFor(t, evWait, "the type's new name on the other instance", func() bool {
		return strings.Contains(a.do(t, "GET", page, nil).Want(http.StatusOK).Body, renamed)
	})

	admin := b.signIn(t, c.Admin)
	form := cloneValues(admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values)
	form.Set("name", "Praxis am Park")
	admin.Post("/staff/settings", form).WantRedirect("/staff/settings?saved=1")
	testkit.WaitFor(t, evWait, "the clinic's new name on the other instance", func() bool {
		return strings.Contains(a.do(t, "GET", page, nil).Want(http.StatusOK).Body, "Praxis am Park")
	})
	hits = liveHits(t, a, "clinic")
	if !strings.Contains(a.do(t, "GET", page, nil).Want(http.StatusOK).Body, renamed) || liveHits(t, a, "clinic") != hits+1 {
		t.Fatal("after the edits the clinic page is no longer answered from memory")
	}
}

// renameType gives c's first type a new name through the staff set-up
// service of instance on, and returns the name.
func renameType(t *testing.T, on *app, c clinic, name string) string {
	t.Helper()
	ctx := context.Background()
	u := c.Admin.User(c.ID)
	typ, sps, err := on.Deps.Practice.Type(ctx, u, c.Type0().ID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = on.Deps.Practice.SaveType(ctx, u, typ.ID, practice.TypeInput{
		Name: name, Description: typ.Description, DurationMin: int(typ.DurationMin), SlotStepMin: int(typ.SlotStepMin),
		BufferBeforeMin: int(typ.BufferBeforeMin), BufferAfterMin: int(typ.BufferAfterMin), MinNoticeMin: int(typ.MinNoticeMin),
		MaxAdvanceDays: int(typ.MaxAdvanceDays), CooldownMin: int(typ.CooldownMin), MaxHoldsPerClient: int(typ.MaxHoldsPerClient),
		ReminderHours: int(typ.ReminderMin / 60), SpecialistIDs: sps, Version: typ.Version,
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}
