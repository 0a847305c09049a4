package staff_test

// The role table: what each role may do as the brief of the roles states
// it, every service method that takes a User checking its action first
// (found by reflection over the staff services, the desk, the waitlist and
// the outbox, so a new method of theirs cannot be left out), and README's
// Roles table matching the code's.

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// methodActions names the action every service method that takes a User
// checks. A method missing here fails TestRolesEveryServiceMethodChecksItsAction.
var methodActions = map[string]staff.Action{
	"Service.StaffUsers":         staff.ActAccounts,
	"Service.ClinicSettings":     staff.ActSettings,
	"Service.SaveClinicSettings": staff.ActSettings,
	"Service.CreateStaffUser":    staff.ActAccounts,
	"Service.SetDisabled":        staff.ActAccounts,
	"Service.MakeSignInLink":     staff.ActAccounts,
	"Service.ChangePassword":     staff.ActPassword,
	"Service.KioskTokens":        staff.ActKiosks,
	"Service.CreateKioskToken":   staff.ActKiosks,
	"Service.RevokeKioskToken":   staff.ActKiosks,
	"Service.Audit":              staff.ActAudit,
	"Service.Specialists":        staff.ActSpecialists,
	"Service.Specialist":         staff.ActSpecialists,
	"Service.FutureBookings":     staff.ActSpecialists,
	"Service.CreateSpecialist":   staff.ActSpecialistsEdit,
	"Service.UpdateSpecialist":   staff.ActSpecialistsEdit,
	"Service.WeeklyHours":        staff.ActHours,
	"Service.SetWeeklyHours":     staff.ActHours,
	"Service.Overrides":          staff.ActOverrides,
	"Service.Override":           staff.ActOverrides,
	"Service.AddOverride":        staff.ActOverrides,
	"Service.DeleteOverride":     staff.ActOverrides,
	"Service.Types":              staff.ActTypes,
	"Service.Type":               staff.ActTypes,
	"Service.SaveType":           staff.ActTypes,
	"Service.CalendarChoices":    staff.ActCalendar,
	"Bookings.Calendar":          staff.ActCalendar,
	"Bookings.BookForPatient":    staff.ActBook,
	"Bookings.Cancel":            staff.ActCancel,
	"Bookings.Reschedule":        staff.ActMove,
	"Bookings.Search":            staff.ActSearch,
	"Service.MarkAttendance":     staff.ActAttendance,
	"Service.NoShows":            staff.ActBook,
	"Service.BookingCard":        staff.ActCalendar,
	"Service.DaySheet":           staff.ActCalendar,
	"Desk.Slot":                  staff.ActBook,
	"Desk.Hold":                  staff.ActBook,
	"Desk.Release":               staff.ActBook,
	"Desk.Book":                  staff.ActBook,
	"Desk.MoveChoices":           staff.ActMove,
	"Waitlist.OfferByHand":       waitlist.ActOffer,
	"Waitlist.Remove":            waitlist.ActRemove,
	"Waitlist.Entry":             waitlist.ActOffer,
	"Waitlist.List":              waitlist.ActOffer,
	"Waitlist.CountByDay":        waitlist.ActOffer,
	"Outbox.ForBooking":          outbox.ActStatus,
	"Outbox.Copies":              outbox.ActCopies,
	"Outbox.CopyOf":              outbox.ActCopies,
}

// The matrix as it is meant to be, written out apart from the code's table.
func TestRolesMatrix(t *testing.T) {
	t.Parallel()
	desk := []staff.Action{staff.ActCalendar, staff.ActBook, staff.ActCancel, staff.ActMove, staff.ActSearch, staff.ActAttendance}
	desk = append(desk, staff.ActPassword) // every account changes its own password
	want := map[string][]staff.Action{
		staff.RoleAdmin:     staff.Actions(),
		staff.RoleStaff:     append(slices.Clone(desk), staff.ActSpecialists, staff.ActHours, staff.ActOverrides),
		staff.RoleReception: desk,
		"":                  nil,
		"intern":            nil,
	}
	for role, allowed := range want {
		for _, a := range staff.Actions() {
			err := staff.User{Role: role}.May(a)
			if slices.Contains(allowed, a) {
				if err != nil {
					t.Errorf("%q may not %s: %v", role, a, err)
				}
				continue
			}
			ae := apperr.As(err)
			if ae == nil || ae.Kind != apperr.Forbidden || ae.Code != apperr.CodeForbidden || !strings.HasPrefix(ae.Message, "Only ") {
				t.Errorf("%q may %s: %v, want FORBIDDEN saying who may", role, a, err)
			}
		}
	}
	if err := (staff.User{Role: staff.RoleAdmin}).May("no.such.action"); apperr.CodeOf(err) != apperr.CodeForbidden {
		t.Errorf("an action the table does not know: %v, want FORBIDDEN", err)
	}
	msg := apperr.As(staff.User{Role: staff.RoleReception}.May(staff.ActHours)).Message
	if msg != "Only an admin or a staff member of this clinic can see or change specialists' weekly hours." {
		t.Errorf("refusal reads %q", msg)
	}
}

// Every exported method of the services that takes a User is called with
// each role (and zero values for the rest): a role the table allows is not
// refused, any other is refused with FORBIDDEN before anything else is
// checked, and nothing is written.
func TestRolesEveryServiceMethodChecksItsAction(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := newService(pool, nil)
	bookings := booking.NewService(pool)
	rdb := testkit.Redis(t)
	holdStore := holds.NewStore(rdb, 0, nil)
	staffBookings := staff.NewBookings(svc, bookings, holdStore)
	co := checkout.New(pool, holdStore, nil, bookings, quietLogger(), checkout.Limits{})
	ob, err := outbox.New(pool, outbox.Config{PublicURL: "http://clinic.test", Queue: "roles_" + strings.ReplaceAll(uuid.NewString(), "-", "")})
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]any{
		"Service":  svc,
		"Bookings": staffBookings,
		"Desk":     staff.NewDesk(staffBookings, co, slots.New(pool, rdb, slots.Options{Logger: quietLogger()})),
		"Waitlist": waitlist.New(waitlist.NewOpenings(pool, holdStore, waitlist.Config{}), bookings),
		"Outbox":   ob,
	}
	users := map[string]staff.User{"intern": {ClinicID: c.ID, Email: "intern@example.org", Role: "intern"}}
	for _, role := range staff.Roles {
		users[role] = newUser(t, pool, c.ID, role)
	}
	before := auditCount(t, pool, c.ID)

	userType := reflect.TypeOf(staff.User{})
	seen := map[string]bool{}
	for typeName, service := range services {
		v := reflect.ValueOf(service)
		for i := 0; i < v.NumMethod(); i++ {
			m := v.Type().Method(i)
			if !takes(m.Type, userType) {
				continue
			}
			name := typeName + "." + m.Name
			seen[name] = true
			action, ok := methodActions[name]
			if !ok {
				t.Errorf("%s takes a User but has no action here: add it to methodActions (and check u.May at its top)", name)
				continue
			}
			allowed := staff.RolesFor(action)
			for role, u := range users {
				err := callAs(v.Method(i), u)
				refused := apperr.CodeOf(err) == apperr.CodeForbidden
				if slices.Contains(allowed, role) && refused {
					t.Errorf("%s as %s: refused (%v), but %s is allowed %s", name, role, err, role, action)
				}
				if !slices.Contains(allowed, role) && !refused {
					t.Errorf("%s as %s: %v, want FORBIDDEN (%s is for %v)", name, role, err, action, allowed)
				}
			}
		}
	}
	for name := range methodActions {
		if !seen[name] {
			t.Errorf("methodActions names %s, which is no method taking a User", name)
		}
	}
	if n := auditCount(t, pool, c.ID); n != before {
		t.Errorf("the calls wrote %d audit rows", n-before)
	}
}

// takes says whether the method type f has a parameter of type p.
func takes(f, p reflect.Type) bool {
	for i := 0; i < f.NumIn(); i++ {
		if f.In(i) == p {
			return true
		}
	}
	return false
}

// callAs calls a bound method with a context, u and zero values, and
// returns its error (its last result).
func callAs(m reflect.Value, u staff.User) error {
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	args := make([]reflect.Value, m.Type().NumIn())
	for i := range args {
		switch in := m.Type().In(i); {
		case in == ctxType:
			args[i] = reflect.ValueOf(context.Background())
		case in == reflect.TypeOf(u):
			args[i] = reflect.ValueOf(u)
		default:
			args[i] = reflect.Zero(in)
		}
	}
	out := m.Call(args)
	err, _ := out[len(out)-1].Interface().(error)
	return err
}

// README's Roles table says what the code's table says.
func TestRolesREADMETableMatches(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "\n## Roles\n")
	if !ok {
		t.Fatal("README.md has no Roles section")
	}
	var header []string
	rows := map[staff.Action][]string{}
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if header == nil {
			header = cells
			continue
		}
		action := staff.Action(cells[0])
		rows[action] = []string{}
		for i, cell := range cells {
			if i >= len(header) || !slices.Contains(staff.Roles, header[i]) {
				continue
			}
			switch cell {
			case "yes":
				rows[action] = append(rows[action], header[i])
			case "no":
			default:
				t.Errorf("README Roles row %q: cell %q is neither yes nor no", action, cell)
			}
		}
	}
	var roleCols []string
	for _, h := range header {
		if slices.Contains(staff.Roles, h) {
			roleCols = append(roleCols, h)
		}
	}
	if len(roleCols) != len(staff.Roles) {
		t.Fatalf("README Roles columns %v, want one per role %v", header, staff.Roles)
	}
	for _, a := range staff.Actions() {
		got, ok := rows[a]
		if !ok {
			t.Errorf("README Roles table has no row for %s", a)
			continue
		}
		want := staff.RolesFor(a)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("README says %s is for %v; the code says %v", a, got, want)
		}
		delete(rows, a)
	}
	for a := range rows {
		t.Errorf("README Roles table has a row %s the code does not know", a)
	}
}
