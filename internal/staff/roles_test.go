package staff_test

// The role table: what each role may do as the brief of the roles states
// it, every service method that takes a User checking its action first
// (found by reflection over the staff services, the desk, the waitlist,
// the outbox and the patient data service, so a new method of theirs cannot be left out), and README's
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
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// methodActions names the action every service method that takes a User
// checks, keyed by package, type and method, over every service that acts
// for staff: the accounts here, the clinic's set-up (practice), the
// calendar and the desk (desk), the waitlist and the outbox. A method
// missing here fails TestRolesEveryServiceMethodChecksItsAction.
var methodActions = map[string]staff.Action{
	"staff.Service.StaffUsers":              staff.ActAccounts,
	"staff.Service.CreateStaffUser":         staff.ActAccounts,
	"staff.Service.SetDisabled":             staff.ActAccounts,
	"staff.Service.SetRole":                 staff.ActAccounts,
	"staff.Service.MakeSignInLink":          staff.ActAccounts,
	"staff.Service.ChangePassword":          staff.ActPassword,
	"staff.Service.Audit":                   staff.ActAudit,
	"staff.Service.SecondFactor":            staff.ActSecondFactor,
	"staff.Service.SecondFactorsOn":         staff.ActAccounts,
	"staff.Service.StartSecondFactor":       staff.ActSecondFactor,
	"staff.Service.ConfirmSecondFactor":     staff.ActSecondFactor,
	"staff.Service.Sessions":                staff.ActSecondFactor,
	"staff.Service.EndSession":              staff.ActSecondFactor,
	"staff.Service.EndOtherSessions":        staff.ActSecondFactor,
	"staff.Service.ResetSecondFactor":       staff.ActSecondFactorAdmin,
	"staff.Service.SetSecondFactorRequired": staff.ActSecondFactorAdmin,
	"practice.Service.ClinicSettings":       staff.ActSettings,
	"practice.Service.SaveClinicSettings":   staff.ActSettings,
	"practice.Service.KioskTokens":          staff.ActKiosks,
	"practice.Service.CreateKioskScreen":    staff.ActKiosks,
	"practice.Service.SetKioskLanguage":     staff.ActKiosks,
	"practice.Service.CreateKioskToken":     staff.ActKiosks,
	"practice.Service.RevokeKioskToken":     staff.ActKiosks,
	"practice.Service.Specialists":          staff.ActSpecialists,
	"practice.Service.Specialist":           staff.ActSpecialists,
	"practice.Service.FutureBookings":       staff.ActSpecialists,
	"practice.Service.CreateSpecialist":     staff.ActSpecialistsEdit,
	"practice.Service.UpdateSpecialist":     staff.ActSpecialistsEdit,
	"practice.Service.WeeklyHours":          staff.ActHours,
	"practice.Service.SetWeeklyHours":       staff.ActHours,
	"practice.Service.Overrides":            staff.ActOverrides,
	"practice.Service.Override":             staff.ActOverrides,
	"practice.Service.AddOverride":          staff.ActOverrides,
	"practice.Service.DeleteOverride":       staff.ActOverrides,
	"practice.Service.Closures":             staff.ActClosures,
	"practice.Service.Closure":              staff.ActClosures,
	"practice.Service.ClosureBookings":      staff.ActClosures,
	"practice.Service.AddClosure":           staff.ActClosures,
	"practice.Service.AddClinicClosure":     staff.ActClinicClosures,
	"practice.Service.DeleteClosure":        staff.ActClosures,
	"practice.Service.Holidays":             staff.ActClosures,
	"practice.Service.SetHolidays":          staff.ActClinicClosures,
	"practice.Service.HolidayBookings":      staff.ActClinicClosures,
	"practice.Service.Types":                staff.ActTypes,
	"practice.Service.Type":                 staff.ActTypes,
	"practice.Service.SaveType":             staff.ActTypes,
	"desk.Bookings.CalendarChoices":         staff.ActCalendar,
	"desk.Bookings.LookUpPatients":          staff.ActBook,
	"desk.Bookings.Calendar":                staff.ActCalendar,
	"desk.Bookings.BookForPatient":          staff.ActBook,
	"desk.Bookings.Cancel":                  staff.ActCancel,
	"desk.Bookings.CancelSeriesFrom":        staff.ActCancel,
	"desk.Bookings.Reschedule":              staff.ActMove,
	"desk.Bookings.Search":                  staff.ActSearch,
	"desk.Bookings.MarkAttendance":          staff.ActAttendance,
	"desk.Bookings.NoShows":                 staff.ActBook,
	"desk.Bookings.LateCancels":             staff.ActBook,
	"desk.Bookings.BookingCard":             staff.ActCalendar,
	"desk.Bookings.DaySheet":                staff.ActCalendar,
	"desk.Desk.Slot":                        staff.ActBook,
	"desk.Desk.Hold":                        staff.ActBook,
	"desk.Desk.Release":                     staff.ActBook,
	"desk.Desk.Book":                        staff.ActBook,
	"desk.Desk.MoveChoices":                 staff.ActMove,
	"waitlist.Waitlist.OfferByHand":         waitlist.ActOffer,
	"waitlist.Waitlist.Remove":              waitlist.ActRemove,
	"waitlist.Waitlist.Entry":               waitlist.ActOffer,
	"waitlist.Waitlist.List":                waitlist.ActOffer,
	"waitlist.Waitlist.CountByDay":          waitlist.ActOffer,
	"outbox.Outbox.ForBooking":              outbox.ActStatus,
	"outbox.Outbox.Copies":                  outbox.ActCopies,
	"outbox.Outbox.SearchCopies":            outbox.ActCopies,
	"outbox.Outbox.CopyOf":                  outbox.ActCopies,
	"outbox.Outbox.Held":                    outbox.ActCopies,
	"outbox.Outbox.SendHeld":                outbox.ActSendHeld,
	"privacy.Service.Holdings":              privacy.ActPatients,
	"privacy.Service.Erase":                 privacy.ActErase,
	"privacy.Recorder.ByPatient":            privacy.ActReadAccess,
	"privacy.Recorder.ByStaff":              privacy.ActReadAccess,

	// Rooms and devices, as the specialists' pages.
	"practice.Service.Rooms":               staff.ActSpecialists,
	"practice.Service.Room":                staff.ActSpecialists,
	"practice.Service.CreateRoom":          staff.ActSpecialistsEdit,
	"practice.Service.UpdateRoom":          staff.ActSpecialistsEdit,
	"practice.Service.RoomHours":           staff.ActSpecialists,
	"practice.Service.SetRoomHours":        staff.ActHours,
	"practice.Service.RoomClosures":        staff.ActClosures,
	"practice.Service.AddRoomClosure":      staff.ActClosures,
	"practice.Service.DeleteRoomClosure":   staff.ActClosures,
	"practice.Service.RoomClosureBookings": staff.ActClosures,
	"practice.Service.TypeNeeds":           staff.ActTypes,
	"practice.Service.SetTypeNeed":         staff.ActTypes,
}

// The matrix as it is meant to be, written out apart from the code's table.
func TestRolesMatrix(t *testing.T) {
	t.Parallel()
	desk := []staff.Action{staff.ActCalendar, staff.ActBook, staff.ActCancel, staff.ActMove, staff.ActSearch, staff.ActAttendance}
	desk = append(desk, staff.ActPassword)     // every account changes its own password
	desk = append(desk, staff.ActSecondFactor) // and keeps its own second factor and sessions
	want := map[string][]staff.Action{
		staff.RoleAdmin:     staff.Actions(),
		staff.RoleStaff:     append(slices.Clone(desk), staff.ActSpecialists, staff.ActHours, staff.ActOverrides, staff.ActClosures),
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
	bookings := booking.NewService(pool)
	rdb := testkit.Redis(t)
	holdStore := holds.NewStore(rdb, 0, nil)
	staffBookings := desk.NewBookings(pool, nil, bookings, holdStore)
	co := checkout.New(pool, holdStore, nil, bookings, quietLogger(), checkout.Limits{})
	ob, err := outbox.New(pool, outbox.Config{PublicURL: "http://clinic.test", Queue: "roles_" + strings.ReplaceAll(uuid.NewString(), "-", "")})
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]any{
		"staff.Service":     newService(pool, nil),
		"practice.Service":  practice.New(pool, nil),
		"desk.Bookings":     staffBookings,
		"desk.Desk":         desk.NewDesk(staffBookings, co, slots.New(pool, rdb, slots.Options{Logger: quietLogger()})),
		"waitlist.Waitlist": waitlist.New(waitlist.NewOpenings(pool, holdStore, waitlist.Config{}), bookings),
		"outbox.Outbox":     ob,
		"privacy.Service":   privacy.New(privacy.Config{Pool: pool, Bookings: bookings, Outbox: ob, Ledger: privacy.NewLedger("", make([]byte, 32))}),
		"privacy.Recorder":  privacy.NewRecorder(pool),
	}
	users := map[string]staff.User{"intern": {ClinicID: c.ID, Email: "intern@example.org", Role: "intern"}}
	for _, role := range staff.Roles {
		users[role] = testkit.StaffUser(t, pool, c.ID, role)
	}
	before := testkit.AuditCount(t, pool, c.ID)

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
	if n := testkit.AuditCount(t, pool, c.ID); n != before {
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
