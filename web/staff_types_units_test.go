package web_test

// The type form gives lengths of time as people say them: a number and
// its unit, shown in the largest unit that says it exactly.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

func TestTypeFormInHoursAndDays(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	v := cloneValues(admin.Get("/staff/types/new").Want(http.StatusOK).Form(`[data-testid="type-form"]`).Values)
	fillLongVisit(v, c.Specialists[0].ID)
	v.Del("minNoticeMin")
	v.Del("cooldownMin")
	v.Set("minNotice", "2")
	v.Set("minNoticeUnit", "h")
	v.Set("cooldown", "1")
	v.Set("cooldownUnit", "d")
	r := admin.Post("/staff/types", v)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", r.Status, clip(r.Body, 800))
	}
	id := uuid.MustParse(strings.TrimPrefix(r.Header.Get("Location"), "/staff/types/"))
	got, err := db.New(a.Pool).AppointmentTypeGetInClinic(context.Background(), db.AppointmentTypeGetInClinicParams{ID: id, ClinicID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.MinNoticeMin != 120 || got.CooldownMin != 1440 {
		t.Errorf("stored notice %d min, cooldown %d min; want 120 and 1440", got.MinNoticeMin, got.CooldownMin)
	}
	doc := admin.Get("/staff/types/" + id.String()).Want(http.StatusOK).Doc()
	for name, want := range map[string]string{"minNotice": "2 h", "cooldown": "1 d"} {
		n, _ := doc.Find("#" + name).Attr("value")
		unit, _ := doc.Find("#" + name + "Unit option[selected]").Attr("value")
		if n+" "+unit != want {
			t.Errorf("%s shows %q, want %q", name, n+" "+unit, want)
		}
	}
}
