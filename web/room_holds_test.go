package web_test

// Holds of a type that needs a room: the hold covers the room, so
// patients racing for the room's one time with different specialists are
// sorted out when they hold, and live grids show the time held for every
// specialist.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/testkit"
)

// roomClinic is a clinic of three specialists whose second type,
// Ultrasound, needs its one ultrasound room, as the demo clinic's does.
func roomClinic(t *testing.T, a *app) (clinic, uuid.UUID) {
	t.Helper()
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 3, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Ultrasound", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}})
	u := c.Admin.User(c.ID)
	room, err := a.Deps.Practice.CreateRoom(t.Context(), u, practice.RoomInput{Name: "Sono 1", Kind: "ultrasound", AlwaysOpen: true, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Deps.Practice.SetTypeNeed(t.Context(), u, c.Types[1].ID, practice.Need{Kind: "ultrasound"}); err != nil {
		t.Fatal(err)
	}
	return c, room.ID
}

// Twelve patients at a barrier on one ultrasound time, four with each of
// the three specialists: exactly one hold and one booking (of the room),
// the other eleven refused when they hold (423 SLOT_HELD), and not one of
// their requests reaches PostgreSQL.
//
// Guards the room check of the claim script: without it each specialist's
// first claim gets 201 (three holds) and two patients learn only at
// booking that the room is taken.
func TestTwelvePatientsOneRoomThreeSpecialistsAreSortedOutAtHoldTime(t *testing.T) {
	t.Parallel()
	pg := &pgTrips{}
	a := newApp(t, withPool(tracedPool(t, pg)), markingRequests(), withOptions(program.Options{HoldsPerAddress: 4, APIHoldsPerMinute: 120}))
	c, room := roomClinic(t, a)
	raceForRoom(t, []*app{a}, pg, c, room, c.Next(time.Thursday, 10, 0))
}

// The same on three instances sharing PostgreSQL and Redis.
func TestThreeInstancesSortOutARoomRaceAtHoldTime(t *testing.T) {
	t.Parallel()
	pg := &pgTrips{}
	o := program.Options{HoldsPerAddress: 4, APIHoldsPerMinute: 120}
	servers := make([]*app, 3)
	for i := range servers {
		servers[i] = newApp(t, withPool(tracedPool(t, pg)), markingRequests(), withOptions(o))
	}
	c, room := roomClinic(t, servers[0])
	raceForRoom(t, servers, pg, c, room, c.Next(time.Friday, 11, 0))
}

// raceForRoom releases 12 patients, spread over the servers and the three
// specialists, at once on the ultrasound time start, and checks that one
// held it and booked the room and every other was told SLOT_HELD without
// a round trip to PostgreSQL.
func raceForRoom(t *testing.T, servers []*app, pg *pgTrips, c clinic, room uuid.UUID, start time.Time) {
	t.Helper()
	const patients = 12
	typ := c.Types[1]
	// Each instance reads the day's slots of each specialist once (a hold
	// of another time of the day), as the patients' pages would have: the
	// race itself is then answered from the cache and Redis.
	for i, s := range servers {
		for j, sp := range c.Specialists {
			body := holdBody(typ.ID, start.Add(time.Duration(2+3*i+j)*time.Hour/2), clientID())
			body["specialistId"] = sp.ID.String()
			if r := s.newClient(t).send("POST", "/v1/holds", body); r.Status != http.StatusCreated {
				t.Fatalf("warming up: %d %s", r.Status, r.Body)
			}
		}
	}
	type patient struct {
		on     *app
		b      *client
		client string
		sp     uuid.UUID
	}
	ps := make([]patient, patients)
	for i := range ps {
		on := servers[i%len(servers)]
		ps[i] = patient{on: on, b: on.newClient(t), client: clientID(), sp: c.Specialists[(i/len(servers))%3].ID}
	}
	answers := make([]*response, patients)
	sent := pg.count(func() {
		testkit.Together(patients, func(i int) {
			body := holdBody(typ.ID, start, ps[i].client)
			body["specialistId"] = ps[i].sp.String()
			answers[i] = ps[i].b.send("POST", "/v1/holds", body)
		})
	})
	winner, tally := -1, map[int]int{}
	for i, r := range answers {
		tally[r.Status]++
		if r.Status == http.StatusCreated && winner < 0 {
			winner = i
		}
	}
	if tally[http.StatusCreated] != 1 || tally[http.StatusLocked] != patients-1 {
		t.Fatalf("%d patients on %d instances holding one room's time with 3 specialists: answers %v, want one 201 and %d 423",
			patients, len(servers), tally, patients-1)
	}
	for i, r := range answers {
		if i != winner {
			wantError(t, r, http.StatusLocked, "SLOT_HELD", "")
		}
	}
	if n := len(trips(sent)); n != 0 {
		t.Fatalf("the race made %d round trips to PostgreSQL, want none: %v", n, sent)
	}

	var h holdView
	answers[winner].Decode(&h)
	w := ps[winner]
	booked := servers[(winner+1)%len(servers)].book(t, typ.ID, h, w.client)
	var got uuid.NullUUID
	if err := servers[0].Pool.QueryRow(context.Background(), `SELECT resource_id FROM bookings WHERE id = $1`, booked.Appointment.ID).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got.UUID != room {
		t.Fatalf("the booking holds room %v, want the held room %s", got, room)
	}
	var n int
	if err := servers[0].Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM bookings WHERE clinic_id = $1 AND slot_start = $2 AND status = 'confirmed'`, c.ID, start).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d confirmed bookings at the room's time, want the winner's one", n)
	}
	// A loser who tries again with another specialist is told the time is
	// taken: its room is booked.
	loser := ps[(winner+1)%patients]
	again := holdBody(typ.ID, start, loser.client)
	for _, sp := range c.Specialists {
		if sp.ID != w.sp {
			again["specialistId"] = sp.ID.String()
			break
		}
	}
	wantError(t, loser.b.send("POST", "/v1/holds", again), http.StatusConflict, "SLOT_TAKEN", "")
}

// A hold of the room by one specialist takes the time out of another
// specialist's live ultrasound grid, and its release puts it back; the
// consultations' grid at that time does not change.
func TestARoomHoldShowsOnEverySpecialistsLiveGrid(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{HoldsPerMinute: 10000}))
	c, _ := roomClinic(t, a)
	start := c.Next(time.Wednesday, 9, 30)
	other := c.Specialists[1].ID
	cell := grid.CellID(other, start)
	ultrasound := dialSSE(t, nil, a.URL+c.BookPath(c.Types[1])+"/live?week="+c.Week(start)+"&specialist="+other.String())
	consult := dialSSE(t, nil, a.URL+c.BookPath(c.Types[0])+"/live?week="+c.Week(start)+"&specialist="+other.String())
	ultrasound.until(5*time.Second, cell+" free", func(e sseEvent) bool { return e.Name == cell && stateOf(e.Data()) == "free" })
	consult.until(5*time.Second, cell+" free", func(e sseEvent) bool { return e.Name == cell && stateOf(e.Data()) == "free" })

	h := a.holdOf(t, c.Types[1].ID, c.Specialists[0].ID, start, "room-holder")
	ultrasound.until(5*time.Second, cell+" held", func(e sseEvent) bool { return e.Name == cell && stateOf(e.Data()) == "held" })
	// Its timeslots say so too, for every specialist.
	var slots struct {
		Timeslots []struct {
			Start string `json:"start"`
		} `json:"timeslots"`
	}
	day := c.Week(start)
	a.do(t, "GET", "/v1/appointment-types/"+c.Types[1].ID.String()+"/timeslots?from="+day+"&to="+day, nil).Decode(&slots)
	for _, s := range slots.Timeslots {
		if s.Start == rfc(start) {
			t.Fatalf("the held room's time is still offered: %+v", slots.Timeslots)
		}
	}

	a.release(t, h, "room-holder")
	ultrasound.until(5*time.Second, cell+" free again", func(e sseEvent) bool { return e.Name == cell && stateOf(e.Data()) == "free" })
	for {
		ev, ok, _ := consult.next(300 * time.Millisecond)
		if !ok {
			break
		}
		if ev.Name == cell && stateOf(ev.Data()) != "free" {
			t.Fatalf("the consultation at the room's time shows %q", stateOf(ev.Data()))
		}
	}
}

// A booking of a type that needs a room costs what one of a type without
// rooms does (TestRedisCommandsPerBookingStep): the room is chosen inside
// the claim's script (a few more calls within it, one more key per room
// tried) and named in the booking's insert, so no step sends another
// command to Redis or makes another round trip to PostgreSQL.
func TestRedisCommandsPerBookingStepOfARoomType(t *testing.T) {
	rdb := testkit.PrivateRedis(t)
	pg := &pgTrips{}
	a := newApp(t, withRedis(rdb), withPool(tracedPool(t, pg)), markingRequests(), withOptions(program.Options{APIHoldsPerMinute: 100000}))
	c, room := roomClinic(t, a)
	typ := c.Types[1]
	m := newRedisSteps(t, rdb)
	book := func(daysAhead int) (map[string][]string, uuid.UUID) {
		from := time.Now().In(c.Loc).AddDate(0, 0, daysAhead).Format(time.DateOnly)
		to := time.Now().In(c.Loc).AddDate(0, 0, daysAhead+6).Format(time.DateOnly)
		client := clientID()
		steps := map[string][]string{}
		var slots struct {
			Timeslots []struct {
				Start string `json:"start"`
			} `json:"timeslots"`
		}
		steps["timeslots"] = m.count(func() {
			a.do(t, "GET", "/v1/appointment-types/"+typ.ID.String()+"/timeslots?from="+from+"&to="+to, nil).Decode(&slots)
		})
		if len(slots.Timeslots) == 0 {
			t.Fatalf("no timeslots from %s to %s", from, to)
		}
		start, err := time.Parse(time.RFC3339, slots.Timeslots[len(slots.Timeslots)/2].Start)
		if err != nil {
			t.Fatal(err)
		}
		var h holdView
		steps["hold"] = m.count(func() { h = a.hold(t, typ.ID, start, client) })
		var b bookedView
		steps["book"] = m.count(func() {
			steps["book/pg"] = pg.count(func() { b = a.book(t, typ.ID, h, client, "Idempotency-Key", uuid.NewString()) })
		})
		return steps, b.Appointment.ID
	}
	// Scripts loaded, connections dialled, the counters of the clinic's
	// new set-up (its room) seen: not counted.
	book(1)
	book(8)
	steps, id := book(15)
	var got uuid.UUID
	if err := a.Pool.QueryRow(t.Context(), `SELECT resource_id FROM bookings WHERE id = $1`, id).Scan(&got); err != nil || got != room {
		t.Fatalf("the booking holds room %s (%v), want %s", got, err, room)
	}
	// River's notice of new jobs (PGNotifyMany) goes out at most once in
	// its debounce window, so it falls to whichever booking comes first
	// after a pause (on a loaded machine, often this one): not the room's.
	var pgTrips []string
	for _, s := range trips(steps["book/pg"]) {
		if !strings.Contains(s, "PGNotifyMany") {
			pgTrips = append(pgTrips, s)
		}
	}
	if n := len(pgTrips); n > 4 {
		t.Errorf("book made %d round trips to PostgreSQL, want at most 4 (as a type without rooms): %v", n, steps["book/pg"])
	}
	most := map[string]int{"timeslots": 2, "hold": 1, "book": 3}
	for _, step := range []string{"timeslots", "hold", "book"} {
		sent := steps[step]
		t.Logf("%s: %d commands: %v", step, len(sent), sent)
		if len(sent) > most[step] {
			t.Errorf("%s sent %d commands to Redis, want at most %d (as a type without rooms): %v", step, len(sent), most[step], sent)
		}
	}
}
