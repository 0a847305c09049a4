package web_test

// Tests of the appointment type pages: a new type with every field, its
// validation in place, and an edit against a stale version.

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

func TestStaffAppointmentTypes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	admin := a.signIn(t, c.Admin)

	newForm := admin.Get("/staff/types/new").Want(http.StatusOK).Form(`[data-testid="type-form"]`)
	if newForm.Action != "/staff/types" {
		t.Fatalf("new type form posts to %q", newForm.Action)
	}
	fill := func(v url.Values) { fillLongVisit(v, c.Specialists[1].ID) }

	t.Run("DurationZeroIsRefusedInPlace", func(t *testing.T) {
		v := cloneValues(newForm.Values)
		fill(v)
		v.Set("durationMin", "0")
		before := a.auditCount(t, c.ID)
		r := admin.Post("/staff/types", v).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="durationMin-error"]`); msg != "Duration (minutes) must be from 5 to 480." {
			t.Errorf("durationMin error %q", msg)
		}
		back := r.Form(`[data-testid="type-form"]`)
		if back.Values.Get("name") != "Long visit" || back.Values.Get("slotStepMin") != "15" || !slices.Contains(back.Values["specialists"], c.Specialists[1].ID.String()) {
			t.Errorf("the form lost what was typed: %v", back.Values)
		}
		for field, val := range map[string]string{"slotStepMin": "1", "bufferBeforeMin": "-1", "maxAdvanceDays": "0", "maxHoldsPerClient": "11", "name": " "} {
			v := cloneValues(newForm.Values)
			fill(v)
			v.Set(field, val)
			r := admin.Post("/staff/types", v).Want(http.StatusUnprocessableEntity)
			if r.Text(`[data-testid="`+field+`-error"]`) == "" {
				t.Errorf("%s=%q: no message in place", field, val)
			}
		}
		if n := a.auditCount(t, c.ID); n != before {
			t.Errorf("refused forms wrote %d audit rows", n-before)
		}
	})

	var id uuid.UUID
	t.Run("CreateStoresEveryField", func(t *testing.T) {
		v := cloneValues(newForm.Values)
		fill(v)
		r := admin.Post("/staff/types", v)
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/staff/types/") {
			t.Fatalf("create: %d %q\n%s", r.Status, r.Header.Get("Location"), clip(r.Body, 1000))
		}
		id = uuid.MustParse(strings.TrimPrefix(r.Header.Get("Location"), "/staff/types/"))
		got, err := db.New(a.Pool).AppointmentTypeGetInClinic(context.Background(), db.AppointmentTypeGetInClinicParams{ID: id, ClinicID: c.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Long visit" || got.Description != "A long one." || got.DurationMin != 45 || got.SlotStepMin != 15 || got.BufferBeforeMin != 5 ||
			got.BufferAfterMin != 10 || got.MinNoticeMin != 120 || got.MaxAdvanceDays != 30 || got.CooldownMin != 60 || got.MaxHoldsPerClient != 2 {
			t.Errorf("stored: %+v", got)
		}
		ids, _ := db.New(a.Pool).AppointmentTypeSpecialistIDs(context.Background(), id)
		if len(ids) != 1 || ids[0] != c.Specialists[1].ID {
			t.Errorf("performed by %v", ids)
		}
		page := admin.Get("/staff/types/" + id.String()).Want(http.StatusOK).Form(`[data-testid="type-form"]`)
		if page.Values.Get("durationMin") != "45" || page.Values.Get("cooldown")+" "+page.Values.Get("cooldownUnit") != "1 h" || !slices.Equal(page.Values["specialists"], []string{c.Specialists[1].ID.String()}) {
			t.Errorf("the type page reads %v", page.Values)
		}
		if admin.Get("/staff/types").Doc().Find(`a[href="/staff/types/`+id.String()+`"]`).Length() != 1 {
			t.Error("not in the list")
		}
	})

	t.Run("EditAndStaleVersion", func(t *testing.T) {
		editTypeAgainstAStaleForm(t, a, admin, c, id)
	})
}

// editTypeAgainstAStaleForm saves one of two forms of type id opened at
// the same version: the other is refused with the current values shown.
func editTypeAgainstAStaleForm(t *testing.T, a *app, admin *client, c clinic, id uuid.UUID) {
	if id == uuid.Nil {
		t.Skip("no type")
	}
	p := "/staff/types/" + id.String()
	f1 := admin.Get(p).Form(`[data-testid="type-form"]`)
	f2 := admin.Get(p).Form(`[data-testid="type-form"]`)
	f1.Values.Set("name", "Longer visit")
	f1.Values.Set("durationMin", "60")
	f1.Values["specialists"] = []string{c.Specialists[0].ID.String(), c.Specialists[1].ID.String()}
	admin.Post(f1.Action, f1.Values).WantRedirect(p)
	f2.Values.Set("name", "Short visit")
	f2.Values.Set("durationMin", "15")
	before := a.auditCount(t, c.ID)
	r := admin.Post(f2.Action, f2.Values).Want(http.StatusConflict)
	if msg := r.Text(`[data-testid="stale"]`); !strings.Contains(msg, "changed by someone else since you opened it") {
		t.Errorf("stale message %q", msg)
	}
	cur := r.Form(`[data-testid="type-form"]`)
	if cur.Values.Get("name") != "Longer visit" || cur.Values.Get("durationMin") != "60" || len(cur.Values["specialists"]) != 2 {
		t.Errorf("the stale page shows %v, want the current values", cur.Values)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("the stale save wrote %d rows", n-before)
	}
	got, _ := db.New(a.Pool).AppointmentTypeGetInClinic(context.Background(), db.AppointmentTypeGetInClinicParams{ID: id, ClinicID: c.ID})
	if got.Name != "Longer visit" || got.DurationMin != 60 {
		t.Errorf("stored after the stale save: %+v", got)
	}
}

// fillLongVisit fills a type form with a 45-minute type sp performs,
// every field set.
func fillLongVisit(v url.Values, sp uuid.UUID) {
	v.Set("name", "Long visit")
	v.Set("description", "A long one.")
	v.Set("durationMin", "45")
	v.Set("slotStepMin", "15")
	v.Set("bufferBeforeMin", "5")
	v.Set("bufferAfterMin", "10")
	v.Set("minNoticeMin", "120")
	v.Set("maxAdvanceDays", "30")
	v.Set("cooldownMin", "60")
	v.Set("maxHoldsPerClient", "2")
	v["specialists"] = []string{sp.String()}
}

// TestStaffTypeReminder sets the reminder e-mail's lead of a type, in whole
// hours on the form and in minutes in the row: 24 unless chosen, 0 for
// none, anything outside 0 to 336 refused in place with nothing changed.
func TestStaffTypeReminder(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	stored := func(t *testing.T, id uuid.UUID) db.AppointmentType {
		t.Helper()
		got, err := db.New(a.Pool).AppointmentTypeGetInClinic(context.Background(), db.AppointmentTypeGetInClinicParams{ID: id, ClinicID: c.ID})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	create := func(t *testing.T, v url.Values) uuid.UUID {
		t.Helper()
		r := admin.Post("/staff/types", v)
		if r.Status != http.StatusSeeOther {
			t.Fatalf("create: %d\n%s", r.Status, clip(r.Body, 1000))
		}
		return uuid.MustParse(strings.TrimPrefix(r.Header.Get("Location"), "/staff/types/"))
	}

	newForm := admin.Get("/staff/types/new").Want(http.StatusOK).Form(`[data-testid="type-form"]`)
	if got := newForm.Values.Get("reminderHours"); got != "24" {
		t.Errorf("a new type's form offers a reminder %q hours before, want 24", got)
	}

	t.Run("WithoutTheFieldADay", func(t *testing.T) {
		v := cloneValues(newForm.Values)
		fillLongVisit(v, c.Specialists[0].ID)
		v.Del("reminderHours")
		if got := stored(t, create(t, v)); got.ReminderMin != 1440 {
			t.Errorf("reminder_min %d, want 1440", got.ReminderMin)
		}
	})

	v := cloneValues(newForm.Values)
	fillLongVisit(v, c.Specialists[0].ID)
	v.Set("reminderHours", "48")
	id := create(t, v)
	page := "/staff/types/" + id.String()
	if got := stored(t, id); got.ReminderMin != 2880 {
		t.Fatalf("48 hours stored as %d minutes, want 2880", got.ReminderMin)
	}
	if got := admin.Get(page).Form(`[data-testid="type-form"]`).Values.Get("reminderHours"); got != "48" {
		t.Errorf("the type page shows %q hours, want 48", got)
	}

	t.Run("OutOfRangeRefusedInPlace", func(t *testing.T) {
		for _, val := range []string{"-1", "337", "abc", "1.5", ""} {
			f := admin.Get(page).Form(`[data-testid="type-form"]`)
			f.Values.Set("reminderHours", val)
			before, version := a.auditCount(t, c.ID), stored(t, id).Version
			r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
			if msg := r.Text(`[data-testid="reminderHours-error"]`); msg != "Reminder e-mail (hours before) must be from 0 to 336." {
				t.Errorf("%q: message %q", val, msg)
			}
			if back := r.Form(`[data-testid="type-form"]`).Values.Get("reminderHours"); back != val {
				t.Errorf("%q: the form came back with %q", val, back)
			}
			if got := stored(t, id); got.ReminderMin != 2880 || got.Version != version {
				t.Errorf("%q: stored reminder_min %d version %d, want 2880 and %d", val, got.ReminderMin, got.Version, version)
			}
			if n := a.auditCount(t, c.ID); n != before {
				t.Errorf("%q: the refused form wrote %d audit rows", val, n-before)
			}
		}
	})

	t.Run("ZeroMeansNone", func(t *testing.T) {
		f := admin.Get(page).Form(`[data-testid="type-form"]`)
		f.Values.Set("reminderHours", "0")
		admin.Post(f.Action, f.Values).WantRedirect(page)
		if got := stored(t, id); got.ReminderMin != 0 {
			t.Errorf("reminder_min %d, want 0", got.ReminderMin)
		}
		if got := admin.Get(page).Form(`[data-testid="type-form"]`).Values.Get("reminderHours"); got != "0" {
			t.Errorf("the type page shows %q hours, want 0", got)
		}
	})
}
