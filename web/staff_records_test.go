package web_test

// Tests of the records the staff pages keep and search: one audit row per
// change (and a slot cache generation bumped), the audit page with its
// filters and pages, and the booking search.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// Every change through the staff pages writes exactly one audit row, by
// staff:<email>, and bumps the slot cache generation.
func TestStaffEveryChangeWritesOneAuditRowAndBumpsTheGeneration(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	sp := c.Specialists[0]
	var newSpPath, typePath string
	var bk booking.Booking

	steps := []struct {
		name, action string
		do           func()
	}{
		{"create specialist", "specialist.create", func() {
			r := admin.Post("/staff/specialists", url.Values{"name": {"Dr. Audit"}, "priority": {"3"}, "active": {"on"}}).Want(http.StatusSeeOther)
			newSpPath = r.Header.Get("Location")
		}},
		{"update specialist", "specialist.update", func() {
			f := admin.Get(newSpPath).Form(`[data-testid="specialist-form"]`)
			f.Values.Set("name", "Dr. Audited")
			admin.Post(f.Action, f.Values).WantRedirect(newSpPath)
		}},
		{"set hours", "hours.update", func() {
			f := admin.Get("/staff/specialists/" + sp.ID.String()).Form(`[data-testid="hours-form"]`)
			f.Values.Set("hours.saturday", "09:00-13:00")
			admin.Post(f.Action, f.Values).Want(http.StatusSeeOther)
		}},
		{"add override", "override.create", func() {
			f := admin.Get("/staff/specialists/" + sp.ID.String()).Form(`[data-testid="override-form"]`)
			f.Values.Set("day", c.Next(time.Friday, 0, 0).Format(time.DateOnly))
			admin.Post(f.Action, f.Values).Want(http.StatusSeeOther)
		}},
		{"delete override", "override.delete", func() {
			f := admin.Get("/staff/specialists/" + sp.ID.String()).Form(`[data-testid="overrides"] form`)
			admin.Post(f.Action, f.Values).Want(http.StatusSeeOther)
		}},
		{"create type", "type.create", func() {
			f := admin.Get("/staff/types/new").Form(`[data-testid="type-form"]`)
			f.Values.Set("name", "Audit type")
			f.Values["specialists"] = []string{sp.ID.String()}
			r := admin.Post("/staff/types", f.Values).Want(http.StatusSeeOther)
			typePath = r.Header.Get("Location")
		}},
		{"update type", "type.update", func() {
			f := admin.Get(typePath).Form(`[data-testid="type-form"]`)
			f.Values.Set("durationMin", "20")
			admin.Post(f.Action, f.Values).WantRedirect(typePath)
		}},
		{"phone booking", "booking.create", func() {
			bk = a.phoneBook(t, admin, c, sp.ID, c.Next(time.Tuesday, 9, 0), "Audit Patient", "audit@example.org", "")
		}},
		{"reschedule", "booking.reschedule", func() {
			to := bk.Start.Add(2 * time.Hour).In(c.Loc)
			admin.Post("/staff/bookings/"+bk.ID.String()+"/reschedule", url.Values{
				"start": {to.Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(bk.Version))}, "reason": {"patient asked"},
			}).Want(http.StatusOK)
			var id uuid.UUID
			if err := a.Pool.QueryRow(context.Background(), `SELECT id FROM bookings WHERE rescheduled_from = $1`, bk.ID).Scan(&id); err != nil {
				t.Fatal(err)
			}
			bk = a.booking(t, id)
		}},
		{"cancel", "booking.cancel", func() {
			admin.Post("/staff/bookings/"+bk.ID.String()+"/cancel", url.Values{"reason": {"patient is ill"}}).Want(http.StatusOK)
		}},
		{"create kiosk token", "kiosk_token.create", func() {
			admin.Post("/staff/kiosks", url.Values{"name": {"Lobby"}}).Want(http.StatusCreated)
		}},
		{"create staff account", "staff.create", func() {
			admin.Post("/staff/users", url.Values{"email": {"new-" + uuid.NewString()[:8] + "@example.org"}, "name": {"New"}, "password": {"long enough password"}, "role": {"staff"}}).Want(http.StatusCreated)
		}},
	}
	for _, st := range steps {
		before, gen := a.auditCount(t, c.ID), a.generation(t, c.ID)
		st.do()
		if n := a.auditCount(t, c.ID) - before; n != 1 {
			t.Errorf("%s: %d audit rows, want exactly 1", st.name, n)
		}
		last := a.lastAudit(t, c.ID)
		if last.Action != st.action || last.Actor != c.Admin.Actor() {
			t.Errorf("%s: newest audit row %s by %s, want %s by %s", st.name, last.Action, last.Actor, st.action, c.Admin.Actor())
		}
		if g := a.generation(t, c.ID); g <= gen {
			t.Errorf("%s: the slot cache generation did not increase (%d -> %d)", st.name, gen, g)
		}
	}
}

func TestStaffAuditPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	ctx := context.Background()
	q := db.New(a.Pool)
	ins := func(clinic uuid.UUID, actor, action, entity, id string) {
		t.Helper()
		if err := q.AuditInsert(ctx, db.AuditInsertParams{ClinicID: clinic, Actor: actor, Action: action, Entity: entity, EntityID: id,
			After: json.RawMessage(`{"n":"` + id + `"}`), Reason: "because " + id}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 55 {
		ins(c.ID, "staff:bulk@example.org", "specialist.update", "specialist", fmt.Sprintf("sp-%02d", i))
	}
	for i := range 3 {
		ins(c.ID, "patient", "booking.create", "booking", fmt.Sprintf("bk-%d", i))
	}
	ins(other.ID, "staff:bulk@example.org", "specialist.update", "specialist", "theirs")
	ins(other.ID, "patient", "booking.create", "booking", "their-booking")

	rowsOf := func(r *response) *goquery.Selection { return r.Doc().Find(`[data-testid="audit"] tbody tr`) }
	older := func(r *response) string {
		href, _ := r.Doc().Find(`a:contains("Older")`).Attr("href")
		return href
	}

	p1 := admin.Get("/staff/audit").Want(http.StatusOK)
	if n := rowsOf(p1).Length(); n != 50 {
		t.Fatalf("page 1 has %d rows, want 50", n)
	}
	if txt := rowsOf(p1).First().Text(); !strings.Contains(txt, "patient") || !strings.Contains(txt, "booking.create") || !strings.Contains(txt, "bk-2") || !strings.Contains(txt, "because bk-2") {
		t.Errorf("newest row: %q (who, what, entity, reason)", txt)
	}
	next := older(p1)
	if next == "" {
		t.Fatal("58 rows and no Older link")
	}
	p2 := admin.Get(next).Want(http.StatusOK)
	if n := rowsOf(p2).Length(); n != 8 {
		t.Errorf("page 2 has %d rows, want 8", n)
	}
	if older(p2) != "" || p2.Doc().Find(`a:contains("Newer")`).Length() != 1 {
		t.Error("page 2: want a Newer link and no Older link")
	}
	if strings.Contains(p1.Body+p2.Body, "theirs") || strings.Contains(p1.Body+p2.Body, "their-booking") {
		t.Error("the audit page shows the other clinic's rows")
	}

	byEntity := admin.Get("/staff/audit?entity=booking").Want(http.StatusOK)
	if n := rowsOf(byEntity).Length(); n != 3 {
		t.Errorf("entity=booking: %d rows, want 3", n)
	}
	if v, _ := byEntity.Doc().Find(`input#a-entity`).Attr("value"); v != "booking" {
		t.Errorf("the filter form forgot the entity: %q", v)
	}
	byActor := admin.Get("/staff/audit?actor=" + url.QueryEscape("staff:bulk@example.org")).Want(http.StatusOK)
	if n := rowsOf(byActor).Length(); n != 50 {
		t.Errorf("actor filter: %d rows on page 1, want 50", n)
	}
	rowsOf(byActor).Each(func(_ int, tr *goquery.Selection) {
		if !strings.Contains(tr.Text(), "staff:bulk@example.org") {
			t.Errorf("actor filter shows %q", strings.Join(strings.Fields(tr.Text()), " "))
		}
	})
	next = older(byActor)
	if !strings.Contains(next, "actor=staff") {
		t.Fatalf("the Older link drops the filter: %q", next)
	}
	if n := rowsOf(admin.Get(next)).Length(); n != 5 {
		t.Errorf("actor filter page 2: %d rows, want 5", n)
	}
	if n := rowsOf(admin.Get("/staff/audit?actor=patient&entity=specialist")).Length(); n != 0 {
		t.Errorf("actor=patient&entity=specialist: %d rows", n)
	}
	tomorrow := time.Now().In(c.Loc).AddDate(0, 0, 1).Format(time.DateOnly)
	if n := rowsOf(admin.Get("/staff/audit?from=" + tomorrow)).Length(); n != 0 {
		t.Errorf("from=tomorrow: %d rows", n)
	}
	today := time.Now().In(c.Loc).Format(time.DateOnly)
	if n := rowsOf(admin.Get("/staff/audit?entity=booking&from=" + today + "&to=" + today)).Length(); n != 3 {
		t.Errorf("today's booking rows: %d", n)
	}
	admin.Get("/staff/audit?from=yesterday").Want(http.StatusBadRequest)
}

func TestStaffBookingSearch(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	start := c.Next(time.Friday, 13, 0)
	a.phoneBook(t, admin, c, c.Specialists[0].ID, start, "Zelda Quartermain", "zelda.q@example.org", "+49 30 5550199")
	otherAdmin := a.signIn(t, other.Admin)
	a.phoneBook(t, otherAdmin, other, other.Specialists[0].ID, start, "Zelda Otherclinic", "zelda.o@example.org", "")

	for _, q := range []string{"quarterm", "ZELDA", "zelda.q@example", "5550199"} {
		r := admin.Get("/staff/bookings/search?q=" + url.QueryEscape(q)).Want(http.StatusOK)
		rows := r.Doc().Find(`[data-testid="table"] tbody tr`)
		if rows.Length() != 1 || !strings.Contains(rows.Text(), "Zelda Quartermain") || !strings.Contains(rows.Text(), start.Format("Mon 2 Jan 2006 15:04")) {
			t.Errorf("search %q: %d rows %q", q, rows.Length(), rows.Text())
		}
		if strings.Contains(r.Body, "Otherclinic") {
			t.Errorf("search %q shows the other clinic's booking", q)
		}
		if v, _ := r.Doc().Find(`input#s-q`).Attr("value"); v != q {
			t.Errorf("the search box forgot %q", q)
		}
	}
	d := start.Format(time.DateOnly)
	if r := admin.Get("/staff/bookings/search?q=zelda&from=" + d + "&to=" + d); r.Doc().Find(`[data-testid="table"] tbody tr`).Length() != 1 {
		t.Error("the date range around the booking does not find it")
	}
	after := start.AddDate(0, 0, 1).Format(time.DateOnly)
	r := admin.Get("/staff/bookings/search?q=zelda&from=" + after).Want(http.StatusOK)
	if r.Doc().Find(`[data-testid="table"] tbody tr`).Length() != 0 || r.Text(`[data-testid="notice"]`) != "No bookings match." {
		t.Errorf("a range after the booking: %q", r.Text(`[data-testid="notice"]`))
	}
	if r := admin.Get("/staff/bookings/search?q=nobody-like-this"); r.Text(`[data-testid="notice"]`) != "No bookings match." {
		t.Errorf("no match: %q", r.Text(`[data-testid="notice"]`))
	}
	admin.Get("/staff/bookings/search?q=x&from=soon").Want(http.StatusBadRequest)
}
