package web_test

// Tests of the specialist pages: the list, a specialist's page and edits,
// weekly hours and day overrides, each with its validation in place and
// its stale version.

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

func TestStaffSpecialistPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)

	t.Run("CreateAndList", func(t *testing.T) {
		r := admin.Post("/staff/specialists", url.Values{"name": {"  Dr. Zhivago  "}, "priority": {"42"}, "active": {"on"}})
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/staff/specialists/") {
			t.Fatalf("create: %d %q", r.Status, r.Header.Get("Location"))
		}
		id := uuid.MustParse(strings.TrimPrefix(r.Header.Get("Location"), "/staff/specialists/"))
		sp := a.specialist(t, c, id)
		if sp.Name != "Dr. Zhivago" || sp.Priority != 42 || !sp.Active {
			t.Fatalf("stored: %+v", sp)
		}
		page := admin.Get("/staff/specialists/" + id.String()).Want(http.StatusOK)
		if h := page.Text("h1"); h != "Dr. Zhivago" {
			t.Errorf("page heading %q", h)
		}
		list := admin.Get("/staff/specialists").Want(http.StatusOK)
		if list.Doc().Find(`a[href="/staff/specialists/`+id.String()+`"]`).Length() != 1 {
			t.Error("the list does not link the new specialist")
		}
	})

	t.Run("ValidationInPlace", func(t *testing.T) {
		before := a.auditCount(t, c.ID)
		r := admin.Post("/staff/specialists", url.Values{"name": {"   "}, "priority": {"1"}, "active": {"on"}}).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="name-error"]`); msg != "A specialist needs a name." {
			t.Errorf("name error %q", msg)
		}
		r = admin.Post("/staff/specialists", url.Values{"name": {"Dr. Big"}, "priority": {"5000"}}).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="priority-error"]`); !strings.Contains(msg, "-1000 to 1000") {
			t.Errorf("priority error %q", msg)
		}
		sp := a.specialist(t, c, c.Specialists[0].ID)
		r = admin.Post("/staff/specialists/"+sp.ID.String(), url.Values{"name": {"Dr. X"}, "priority": {"high"}, "version": {strconv.Itoa(int(sp.Version))}}).Want(http.StatusUnprocessableEntity)
		if msg := r.Text(`[data-testid="priority-error"]`); msg == "" {
			t.Error("a priority that is not a number has no message in place")
		}
		if n := a.auditCount(t, c.ID); n != before {
			t.Errorf("refused forms wrote %d audit rows", n-before)
		}
	})

	t.Run("EditAndStaleVersion", func(t *testing.T) {
		editSpecialistAgainstAStaleForm(t, a, admin, c)
	})

	t.Run("DeactivatingListsFutureBookings", func(t *testing.T) {
		sp := a.specialist(t, c, c.Specialists[0].ID)
		start := c.Next(time.Thursday, 15, 30)
		a.phoneBook(t, admin, c, sp.ID, start, "Future Person", "future@example.org", "")
		path := "/staff/specialists/" + sp.ID.String()
		f := admin.Get(path).Form(`[data-testid="specialist-form"]`)
		f.Values.Del("active")
		admin.Post(f.Action, f.Values).WantRedirect(path)
		if now := a.specialist(t, c, sp.ID); now.Active {
			t.Fatal("still active")
		}
		page := admin.Get(path).Want(http.StatusOK)
		if txt := page.Text(`[data-testid="future-bookings"]`); !strings.Contains(txt, "Future Person") || !strings.Contains(txt, start.Format("15:04")) {
			t.Errorf("the deactivated specialist's future bookings: %q", txt)
		}
		var status string
		if err := a.Pool.QueryRow(context.Background(), `SELECT status FROM bookings WHERE specialist_id = $1 AND slot_start = $2`, sp.ID, start).Scan(&status); err != nil || status != "confirmed" {
			t.Errorf("the booking was dropped: %q %v", status, err)
		}
		f = page.Form(`[data-testid="specialist-form"]`)
		f.Values.Set("active", "on")
		admin.Post(f.Action, f.Values).WantRedirect(path)
	})
}

func TestStaffWeeklyHours(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	sp := c.Specialists[0]
	typ := c.Types[0]
	path := "/staff/specialists/" + sp.ID.String()

	t.Run("SaveShowsAtOnceInTheTimeslotsAPI", func(t *testing.T) {
		saveHoursAndSeeTheTimeslots(t, a, admin, c)
	})

	invalid := []struct {
		name, day, value, msg string
	}{
		{"Overlap", "monday", "09:00-12:00, 11:00-13:00", "Monday: 09:00–12:00 overlaps 11:00–13:00."},
		{"EndBeforeStart", "tuesday", "12:00-09:00", "Tuesday: 12:00–09:00 ends before it starts."},
		{"NotATime", "wednesday", "9am-5pm", "is not a time like 09:30"},
		{"NoDash", "thursday", "09:00", "write ranges like 08:30-12:30"},
	}
	for _, tc := range invalid {
		t.Run("Invalid"+tc.name, func(t *testing.T) {
			f := admin.Get(path).Form(`[data-testid="hours-form"]`)
			before, gen := a.auditCount(t, c.ID), a.generation(t, c.ID)
			stored := a.specialist(t, c, sp.ID)
			f.Values.Set("hours."+tc.day, tc.value)
			r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
			if msg := r.Text(`[data-testid="hours.` + tc.day + `-error"]`); !strings.Contains(msg, tc.msg) {
				t.Errorf("message in place for %s: %q, want %q", tc.day, msg, tc.msg)
			}
			if inv, _ := r.Doc().Find(`input#hours\.` + tc.day).Attr("aria-invalid"); inv != "true" {
				t.Errorf("the %s field is not marked invalid", tc.day)
			}
			if n := a.auditCount(t, c.ID); n != before {
				t.Errorf("wrote %d audit rows", n-before)
			}
			if g := a.generation(t, c.ID); g != gen {
				t.Errorf("a refused save bumped the generation")
			}
			if now := a.specialist(t, c, sp.ID); now.Version != stored.Version {
				t.Errorf("a refused save bumped the version")
			}
		})
	}

	// What the person typed stays in the field next to its message, so they
	// can correct it rather than type the week again.
	t.Run("InvalidKeepsWhatWasTyped", func(t *testing.T) {
		f := admin.Get(path).Form(`[data-testid="hours-form"]`)
		f.Values.Set("hours.monday", "09:00-12:00, 11:00-13:00")
		f.Values.Set("hours.friday", "07:00-08:00")
		r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
		back := r.Form(`[data-testid="hours-form"]`)
		if back.Values.Get("hours.monday") != "09:00-12:00, 11:00-13:00" || back.Values.Get("hours.friday") != "07:00-08:00" {
			t.Errorf("after the error the form shows monday %q and friday %q: what was typed is lost (the page re-renders the stored hours, so the message names ranges the field no longer shows)",
				back.Values.Get("hours.monday"), back.Values.Get("hours.friday"))
		}
	})

	t.Run("StaleVersion", func(t *testing.T) {
		f1 := admin.Get(path).Form(`[data-testid="hours-form"]`)
		f2 := admin.Get(path).Form(`[data-testid="hours-form"]`)
		f1.Values.Set("hours.tuesday", "08:00-12:00")
		admin.Post(f1.Action, f1.Values).WantRedirect(path)
		before := a.auditCount(t, c.ID)
		f2.Values.Set("hours.tuesday", "13:00-18:00")
		r := admin.Post(f2.Action, f2.Values).Want(http.StatusConflict)
		if msg := r.Text(`[data-testid="stale"]`); !strings.Contains(msg, "changed by someone else since you opened it") {
			t.Errorf("stale message %q", msg)
		}
		cur := r.Form(`[data-testid="hours-form"]`)
		if cur.Values.Get("hours.tuesday") != "08:00-12:00" {
			t.Errorf("the stale page shows tuesday %q, want the current 08:00-12:00", cur.Values.Get("hours.tuesday"))
		}
		if n := a.auditCount(t, c.ID); n != before {
			t.Errorf("the stale save wrote %d audit rows", n-before)
		}
		tuesday := c.Next(time.Tuesday, 0, 0)
		if got := a.timeslots(t, c, typ.ID, sp.ID, tuesday); len(got) != 8 || got[0] != "08:00" {
			t.Errorf("tuesday's slots after the stale save: %v", got)
		}
	})

	t.Run("StaffMayEditHours", func(t *testing.T) {
		s := a.signIn(t, c.Staff)
		f := s.Get(path).Want(http.StatusOK).Form(`[data-testid="hours-form"]`)
		f.Values.Set("hours.saturday", "09:00-10:00")
		s.Post(f.Action, f.Values).WantRedirect(path)
		if row := a.lastAudit(t, c.ID); row.Action != "hours.update" || row.Actor != c.Staff.Actor() {
			t.Errorf("audit row %s by %s", row.Action, row.Actor)
		}
	})
}

func TestStaffOverrides(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	sp, typ := c.Specialists[0], c.Types[0]
	path := "/staff/specialists/" + sp.ID.String()
	day := c.Next(time.Monday, 0, 0)
	dayS := day.Format(time.DateOnly)

	if got := a.timeslots(t, c, typ.ID, sp.ID, day); len(got) != 16 {
		t.Fatalf("before: %v", got)
	}
	// Closed all day.
	f := admin.Get(path).Form(`[data-testid="override-form"]`)
	if f.Values.Get("closed") != "on" {
		t.Fatalf("the override form is not 'closed' by default: %v", f.Values)
	}
	f.Values.Set("day", dayS)
	f.Values.Set("note", "Training")
	admin.Post(f.Action, f.Values).WantRedirect(path)
	if got := a.timeslots(t, c, typ.ID, sp.ID, day); len(got) != 0 {
		t.Fatalf("the closed day still has slots in the API: %v", got)
	}
	page := admin.Get(path).Want(http.StatusOK)
	if txt := page.Text(`[data-testid="overrides"]`); !strings.Contains(txt, day.Format("Mon 2 Jan 2006")+": closed") || !strings.Contains(txt, "(Training)") {
		t.Fatalf("overrides list: %q", txt)
	}
	if n := page.Text(`p.notice`); n != "Override added." {
		t.Errorf("notice %q", n)
	}
	// The calendar shows it on that day.
	cal := admin.Get("/staff?date=" + dayS + "&view=day").Want(http.StatusOK)
	if txt := cal.Text(`section#cal-` + dayS + ` .override`); !strings.Contains(txt, sp.Name+": closed (Training)") {
		t.Errorf("calendar override: %q", txt)
	}

	t.Run("OverlapIsAConflictInPlace", func(t *testing.T) {
		f := admin.Get(path).Form(`[data-testid="override-form"]`)
		f.Values.Set("day", dayS)
		before := a.auditCount(t, c.ID)
		r := admin.Post(f.Action, f.Values).Want(http.StatusConflict)
		if msg := r.Text(`[role="alert"]`); !strings.Contains(msg, "overlaps an override") {
			t.Errorf("message %q", msg)
		}
		if n := a.auditCount(t, c.ID); n != before {
			t.Errorf("wrote %d audit rows", n-before)
		}
	})

	t.Run("ReplacementHoursValidated", func(t *testing.T) {
		addReplacementHours(t, a, admin, c, day)
	})

	t.Run("StaleVersion", func(t *testing.T) {
		f := admin.Get(path).Form(`[data-testid="override-form"]`)
		f.Values.Set("version", strconv.Itoa(int(a.specialist(t, c, sp.ID).Version)-1))
		f.Values.Set("day", day.AddDate(0, 0, 3).Format(time.DateOnly))
		r := admin.Post(f.Action, f.Values).Want(http.StatusConflict)
		if r.Doc().Find(`[data-testid="stale"]`).Length() != 1 {
			t.Error("no stale message")
		}
	})

	t.Run("Delete", func(t *testing.T) {
		deleteClosedDay(t, a, admin, c, day)
	})
}

// editSpecialistAgainstAStaleForm saves one of two forms opened at the
// same version: the other is refused with the current values shown.
func editSpecialistAgainstAStaleForm(t *testing.T, a *app, admin *client, c clinic) {
	sp := a.specialist(t, c, c.Specialists[0].ID)
	path := "/staff/specialists/" + sp.ID.String()
	// Two editors open the form at the same version.
	f1 := admin.Get(path).Want(http.StatusOK).Form(`[data-testid="specialist-form"]`)
	f2 := admin.Get(path).Want(http.StatusOK).Form(`[data-testid="specialist-form"]`)
	if f1.Values.Get("version") != strconv.Itoa(int(sp.Version)) || f1.Action != path {
		t.Fatalf("form: %+v", f1)
	}
	f1.Values.Set("name", "Dr. First")
	f1.Values.Set("priority", "11")
	admin.Post(f1.Action, f1.Values).WantRedirect(path)
	if notice := admin.Get(path).Text(`p.notice`); notice != "Saved." {
		t.Errorf("after saving: notice %q", notice)
	}
	f2.Values.Set("name", "Dr. Second")
	f2.Values.Set("priority", "22")
	before := a.auditCount(t, c.ID)
	r := admin.Post(f2.Action, f2.Values).Want(http.StatusConflict)
	if msg := r.Text(`[data-testid="stale"]`); !strings.Contains(msg, "changed by someone else since you opened it") {
		t.Errorf("stale message %q", msg)
	}
	cur := r.Form(`[data-testid="specialist-form"]`)
	if cur.Values.Get("name") != "Dr. First" || cur.Values.Get("priority") != "11" || cur.Values.Get("version") != strconv.Itoa(int(sp.Version)+1) {
		t.Errorf("the stale page shows %v, want the current values (Dr. First, 11, version %d)", cur.Values, sp.Version+1)
	}
	if now := a.specialist(t, c, sp.ID); now.Name != "Dr. First" || now.Priority != 11 {
		t.Errorf("the stale save overwrote: %+v", now)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("the stale save wrote %d audit rows", n-before)
	}
	// Saving again from the refreshed form works.
	cur.Values.Set("name", "Dr. Second")
	admin.Post(cur.Action, cur.Values).WantRedirect(path)
}

// saveHoursAndSeeTheTimeslots saves new hours for the first specialist:
// the timeslots API has them at once, and the form reads them back.
func saveHoursAndSeeTheTimeslots(t *testing.T, a *app, admin *client, c clinic) {
	sp, typ := c.Specialists[0], c.Types[0]
	path := "/staff/specialists/" + sp.ID.String()
	monday := c.Next(time.Monday, 0, 0)
	if got := a.timeslots(t, c, typ.ID, sp.ID, monday); len(got) != 16 || got[0] != "09:00" {
		t.Fatalf("before: %v", got) // also warms the cache
	}
	page := admin.Get(path).Want(http.StatusOK)
	f := page.Form(`[data-testid="hours-form"]`)
	if f.Values.Get("hours.monday") != "09:00-17:00" || f.Values.Get("hours.sunday") != "" {
		t.Fatalf("hours form: %v", f.Values)
	}
	gen := a.generation(t, c.ID)
	f.Values.Set("hours.monday", "10:00-11:00, 14:00-15:30")
	f.Values.Set("hours.sunday", "08:00-09:00")
	admin.Post(f.Action, f.Values).WantRedirect(path)
	if g := a.generation(t, c.ID); g <= gen {
		t.Errorf("saving hours did not bump the slot cache generation (%d -> %d)", gen, g)
	}
	want := []string{"10:00", "10:30", "14:00", "14:30", "15:00"}
	if got := a.timeslots(t, c, typ.ID, sp.ID, monday); !slices.Equal(got, want) {
		t.Fatalf("timeslots right after the save: %v, want %v", got, want)
	}
	page = admin.Get(path).Want(http.StatusOK)
	if n := page.Text(`p.notice`); n != "Hours saved." {
		t.Errorf("notice %q", n)
	}
	f = page.Form(`[data-testid="hours-form"]`)
	if f.Values.Get("hours.monday") != "10:00-11:00, 14:00-15:30" {
		t.Errorf("monday reads %q", f.Values.Get("hours.monday"))
	}
	if f.Values.Get("hours.sunday") != "08:00-09:00" {
		t.Errorf("sunday reads %q", f.Values.Get("hours.sunday"))
	}
}

// addReplacementHours: an override with hours is checked field by field,
// then applies to the timeslots.
func addReplacementHours(t *testing.T, a *app, admin *client, c clinic, day time.Time) {
	sp, typ := c.Specialists[0], c.Types[0]
	path := "/staff/specialists/" + sp.ID.String()
	f := admin.Get(path).Form(`[data-testid="override-form"]`)
	f.Values.Del("closed")
	f.Values.Set("day", day.AddDate(0, 0, 1).Format(time.DateOnly))
	f.Values.Set("start", "12:00")
	f.Values.Set("end", "10:00")
	r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
	if msg := r.Text(`[data-testid="end-error"]`); msg != "The end must be after the start." {
		t.Errorf("end error %q", msg)
	}
	f.Values.Set("start", "")
	r = admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
	if msg := r.Text(`[data-testid="start-error"]`); msg == "" {
		t.Error("no message for a missing start")
	}
	f.Values.Set("start", "10:00")
	f.Values.Set("end", "12:00")
	f.Values.Set("day", "")
	r = admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
	if msg := r.Text(`[data-testid="day-error"]`); msg != "Pick a date." {
		t.Errorf("day error %q", msg)
	}
	// And valid replacement hours apply.
	tuesday := day.AddDate(0, 0, 1)
	f.Values.Set("day", tuesday.Format(time.DateOnly))
	admin.Post(f.Action, f.Values).WantRedirect(path)
	if got := a.timeslots(t, c, typ.ID, sp.ID, tuesday); !slices.Equal(got, []string{"10:00", "10:30", "11:00", "11:30"}) {
		t.Errorf("replacement hours 10:00-12:00 give %v", got)
	}
}

// deleteClosedDay removes the closed day: its slots are back, and
// removing it again is not found.
func deleteClosedDay(t *testing.T, a *app, admin *client, c clinic, day time.Time) {
	sp, typ := c.Specialists[0], c.Types[0]
	path := "/staff/specialists/" + sp.ID.String()
	page := admin.Get(path)
	var del form
	page.Doc().Find(`[data-testid="overrides"] li`).Each(func(_ int, li *goquery.Selection) {
		if strings.Contains(li.Text(), "Training") {
			action, _ := li.Find("form").Attr("action")
			del = form{Action: action}
			v, _ := li.Find(`input[name="version"]`).Attr("value")
			del.Values = url.Values{"version": {v}}
		}
	})
	if !strings.HasPrefix(del.Action, "/staff/overrides/") {
		t.Fatalf("no remove form for the closed day")
	}
	gen := a.generation(t, c.ID)
	admin.Post(del.Action, del.Values).WantRedirect(path)
	if g := a.generation(t, c.ID); g <= gen {
		t.Error("deleting an override did not bump the generation")
	}
	if got := a.timeslots(t, c, typ.ID, sp.ID, day); len(got) != 16 {
		t.Errorf("after removing the closed day: %v", got)
	}
	if txt := admin.Get(path).Text(`[data-testid="overrides"]`); strings.Contains(txt, "Training") {
		t.Errorf("still listed: %q", txt)
	}
	admin.Post(del.Action, del.Values).Want(http.StatusNotFound)
}
