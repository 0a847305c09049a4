package web_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

func TestTimeslotsAPI(t *testing.T) {
	t.Parallel()
	ts := newServer(t, nil)
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Timezone: "America/New_York"})
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	loc, _ := time.LoadLocation(c.Timezone)
	monday := testkit.NextWeekday(time.Now(), loc, time.Monday, 0, 0).Format("2006-01-02")
	base := ts.URL + "/v1/appointment-types/" + c.Types[0].ID.String() + "/timeslots"

	t.Run("AnswersUTCSlotsWithTheZone", func(t *testing.T) {
		var body struct {
			Timezone  string `json:"timezone"`
			Timeslots []struct {
				Start         string      `json:"start"`
				End           string      `json:"end"`
				SpecialistIDs []uuid.UUID `json:"specialistIds"`
			} `json:"timeslots"`
		}
		res := getJSON(t, base+"?from="+monday+"&to="+monday, &body)
		if res.StatusCode != 200 || body.Timezone != "America/New_York" || len(body.Timeslots) != 16 {
			t.Fatalf("got %d %s %d slots", res.StatusCode, body.Timezone, len(body.Timeslots))
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
		res = getJSON(t, base+"?from="+monday+"&to="+monday+"&specialistId="+c.Specialists[1].ID.String(), &body)
		if res.StatusCode != 200 || len(body.Timeslots) != 16 || len(body.Timeslots[0].SpecialistIDs) != 1 || body.Timeslots[0].SpecialistIDs[0] != c.Specialists[1].ID {
			t.Fatalf("specialist view: %d %+v", res.StatusCode, body.Timeslots[:1])
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
		{"MalformedType", ts.URL + "/v1/appointment-types/xyz/timeslots?from=" + monday + "&to=" + monday, 400, "id"},
		{"UnknownType", ts.URL + "/v1/appointment-types/" + uuid.NewString() + "/timeslots?from=" + monday + "&to=" + monday, 404, "id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body errorShape
			res := getJSON(t, tc.url, &body)
			if res.StatusCode != tc.status || body.Error.Details["field"] != tc.field || body.Error.Message == "" {
				t.Fatalf("want %d naming %q, got %d %+v", tc.status, tc.field, res.StatusCode, body.Error)
			}
		})
	}
}

func TestClinicAppointmentTypesAPI(t *testing.T) {
	t.Parallel()
	ts := newServer(t, nil)
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	if _, err := pool.Exec(t.Context(), "UPDATE specialists SET active = false WHERE id = $1", c.Specialists[1].ID); err != nil {
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
	res := getJSON(t, ts.URL+"/v1/clinics/"+c.Slug+"/appointment-types", &body)
	if res.StatusCode != http.StatusOK || len(body.AppointmentTypes) != 1 {
		t.Fatalf("got %d %+v", res.StatusCode, body)
	}
	at := body.AppointmentTypes[0]
	if at.ID != c.Types[0].ID || at.DurationMinutes != 30 || len(at.Specialists) != 1 || at.Specialists[0].ID != c.Specialists[0].ID {
		t.Fatalf("type %+v (the inactive specialist must not be offered)", at)
	}

	var e errorShape
	if res := getJSON(t, ts.URL+"/v1/clinics/no-such-clinic/appointment-types", &e); res.StatusCode != 404 || e.Error.Code != "NOT_FOUND" {
		t.Fatalf("unknown clinic: %d %+v", res.StatusCode, e)
	}
}
