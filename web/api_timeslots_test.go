package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

func TestTimeslotsAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Timezone: "America/New_York"})
	other := a.clinic(t, testkit.ClinicOptions{})
	loc := c.Loc
	monday := c.Monday(0, 0).Format("2006-01-02")
	base := "/v1/appointment-types/" + c.Types[0].ID.String() + "/timeslots"

	t.Run("AnswersUTCSlotsWithTheZone", func(t *testing.T) {
		var body struct {
			Timezone  string `json:"timezone"`
			Timeslots []struct {
				Start         string      `json:"start"`
				End           string      `json:"end"`
				SpecialistIDs []uuid.UUID `json:"specialistIds"`
			} `json:"timeslots"`
		}
		res := a.do(t, "GET", base+"?from="+monday+"&to="+monday, nil)
		res.Decode(&body)
		if res.Status != 200 || body.Timezone != "America/New_York" || len(body.Timeslots) != 16 {
			t.Fatalf("got %d %s %d slots", res.Status, body.Timezone, len(body.Timeslots))
		}
		first, err := time.Parse(time.RFC3339, body.Timeslots[0].Start)
		if err != nil || first.Location() != time.UTC {
			t.Fatalf("start %q must be RFC3339 in UTC", body.Timeslots[0].Start)
		}
		if local := first.In(loc); local.Hour() != 9 || local.Minute() != 0 {
			t.Fatalf("first slot is %v local, want 09:00", local)
		}
		for i := 1; i < len(body.Timeslots); i++ {
			if body.Timeslots[i].Start <= body.Timeslots[i-1].Start {
				t.Fatal("slots must be sorted by start")
			}
		}
		if len(body.Timeslots[0].SpecialistIDs) != 2 {
			t.Fatalf("pooled: want both specialists, got %v", body.Timeslots[0].SpecialistIDs)
		}
		res = a.do(t, "GET", base+"?from="+monday+"&to="+monday+"&specialistId="+c.Specialists[1].ID.String(), nil)
		res.Decode(&body)
		if res.Status != 200 || len(body.Timeslots) != 16 || len(body.Timeslots[0].SpecialistIDs) != 1 || body.Timeslots[0].SpecialistIDs[0] != c.Specialists[1].ID {
			t.Fatalf("specialist view: %d %+v", res.Status, body.Timeslots[:1])
		}
	})

	cases := []struct {
		name   string
		url    string
		status int
		field  string
	}{
		{"MissingFrom", base + "?to=" + monday, 400, "from"},
		{"MissingTo", base + "?from=" + monday, 400, "to"},
		{"BadFrom", base + "?from=2026-02-30&to=" + monday, 400, "from"},
		{"BadTo", base + "?from=" + monday + "&to=tomorrow", 400, "to"},
		{"ToBeforeFrom", base + "?from=2026-12-10&to=2026-12-09", 400, "to"},
		{"RangeOver62Days", base + "?from=2026-12-01&to=2027-02-01", 400, "to"},
		{"MalformedSpecialist", base + "?from=" + monday + "&to=" + monday + "&specialistId=bob", 400, "specialistId"},
		{"SpecialistNotOfTheType", base + "?from=" + monday + "&to=" + monday + "&specialistId=" + other.Specialists[0].ID.String(), 400, "specialistId"},
		{"MalformedType", "/v1/appointment-types/xyz/timeslots?from=" + monday + "&to=" + monday, 400, "id"},
		{"UnknownType", "/v1/appointment-types/" + uuid.NewString() + "/timeslots?from=" + monday + "&to=" + monday, 404, "id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body errorShape
			res := a.do(t, "GET", tc.url, nil)
			res.Decode(&body)
			if res.Status != tc.status || body.Error.Details["field"] != tc.field || body.Error.Message == "" {
				t.Fatalf("want %d naming %q, got %d %+v", tc.status, tc.field, res.Status, body.Error)
			}
		})
	}
}

func TestClinicAppointmentTypesAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	if _, err := a.Pool.Exec(t.Context(), "UPDATE specialists SET active = false WHERE id = $1", c.Specialists[1].ID); err != nil {
		t.Fatal(err)
	}
	var body struct {
		AppointmentTypes []struct {
			ID              uuid.UUID `json:"id"`
			Name            string    `json:"name"`
			DurationMinutes int       `json:"durationMinutes"`
			Specialists     []struct {
				ID   uuid.UUID `json:"id"`
				Name string    `json:"name"`
			} `json:"specialists"`
		} `json:"appointmentTypes"`
	}
	res := a.do(t, "GET", "/v1/clinics/"+c.Slug+"/appointment-types", nil)
	res.Decode(&body)
	if res.Status != http.StatusOK || len(body.AppointmentTypes) != 1 {
		t.Fatalf("got %d %+v", res.Status, body)
	}
	at := body.AppointmentTypes[0]
	if at.ID != c.Types[0].ID || at.DurationMinutes != 30 || len(at.Specialists) != 1 || at.Specialists[0].ID != c.Specialists[0].ID {
		t.Fatalf("type %+v (the inactive specialist must not be offered)", at)
	}

	var e errorShape
	res = a.do(t, "GET", "/v1/clinics/no-such-clinic/appointment-types", nil)
	res.Decode(&e)
	if res.Status != 404 || e.Error.Code != "NOT_FOUND" {
		t.Fatalf("unknown clinic: %d %+v", res.Status, e)
	}
}

func TestTimeslotsAndBookingPageStayInsideTheBookingWindow(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t) // types bookable 60 days ahead
	typ := c.Type0()
	keys := func() []string {
		t.Helper()
		ks, err := a.RDB.Keys(context.Background(), "timeslots:{"+c.ID.String()+"}:"+typ.ID.String()+":*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	today := time.Now().In(c.Loc)
	day := func(n int) string { return today.AddDate(0, 0, n).Format(time.DateOnly) }
	base := "/v1/appointment-types/" + typ.ID.String() + "/timeslots"
	for _, tc := range []struct{ name, query, field string }{
		{"63Days", "?from=" + day(0) + "&to=" + day(62), "to"},
		{"Year3000", "?from=3000-01-01&to=3000-01-07", "to"},
		{"PastTheWindow", "?from=" + day(55) + "&to=" + day(62), "to"},
		{"LastYear", "?from=" + day(-365) + "&to=" + day(-360), "from"},
		{"ToBeforeFrom", "?from=" + day(3) + "&to=" + day(2), "to"},
	} {
		var body errorShape
		res := a.do(t, "GET", base+tc.query, nil)
		res.Decode(&body)
		if res.Status != http.StatusBadRequest || body.Error.Details["field"] != tc.field {
			t.Errorf("%s: %d naming %v, want 400 naming %s", tc.name, res.Status, body.Error.Details["field"], tc.field)
		}
	}
	if ks := keys(); len(ks) != 0 {
		t.Errorf("refused ranges wrote cache keys: %v", ks)
	}
	var ok struct{}
	res := a.do(t, "GET", base+"?from="+day(-1)+"&to="+day(60), nil)
	res.Decode(&ok)
	if res.Status != http.StatusOK {
		t.Errorf("yesterday to the window's last day: %d, want 200", res.Status)
	}

	cl := a.newClient(t)
	cl.Get(c.BookPath(typ) + "?week=3000-01-06").Want(http.StatusBadRequest)
	cl.Get(c.BookPath(typ) + "?week=" + day(-30)).Want(http.StatusBadRequest)
	// The week holding the window's last day links to no later week.
	if last := cl.Get(c.BookPath(typ) + "?week=" + day(60)).Want(http.StatusOK); last.Doc().Find(`a[rel="next"]`).Length() != 0 {
		t.Error("the window's last week links to the week after it")
	}
	first := cl.Get(c.BookPath(typ)).Want(http.StatusOK)
	if prev, ok := first.Doc().Find(`a[rel="prev"]`).Attr("href"); ok {
		cl.Get(prev).Want(http.StatusOK) // a link the page shows works
	}
}
