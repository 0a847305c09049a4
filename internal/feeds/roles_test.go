package feeds_test

// Every method of the Service that takes a staff.User checks its action
// first: called with each role (and zero values for the rest), a role the
// table allows is not refused and any other is refused with FORBIDDEN.

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/feeds"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

var methodActions = map[string]staff.Action{
	"SpecialistFeed":       staff.ActSpecialists,
	"LinkedAccounts":       staff.ActSpecialists,
	"NewSpecialistFeed":    staff.ActSpecialistsEdit,
	"RevokeSpecialistFeed": staff.ActSpecialistsEdit,
	"LinkAccount":          staff.ActSpecialistsEdit,
	"UnlinkAccount":        staff.ActSpecialistsEdit,
	"OwnFeed":              staff.ActCalendar,
	"NewOwnFeed":           staff.ActCalendar,
	"RevokeOwnFeed":        staff.ActCalendar,
	"SetNames":             staff.ActSettings,
	"Names":                staff.ActSettings,
	// Only the account's own link is read: every account may.
	"OwnSpecialist": "",
}

func TestEveryMethodChecksItsAction(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := feeds.New(pool, testkit.Redis(t), feeds.Options{})
	users := map[string]staff.User{"intern": {ClinicID: c.ID, Email: "intern@example.org", Role: "intern"}}
	for _, role := range staff.Roles {
		users[role] = testkit.StaffUser(t, pool, c.ID, role)
	}
	userType := reflect.TypeOf(staff.User{})
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	v := reflect.ValueOf(svc)
	seen := 0
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		if m.Type.NumIn() < 3 || m.Type.In(2) != userType {
			continue
		}
		seen++
		action, ok := methodActions[m.Name]
		if !ok {
			t.Errorf("%s takes a User but has no action here", m.Name)
			continue
		}
		for role, u := range users {
			args := make([]reflect.Value, m.Type.NumIn()-1)
			for j := range args {
				switch in := m.Type.In(j + 1); in {
				case ctxType:
					args[j] = reflect.ValueOf(context.Background())
				case userType:
					args[j] = reflect.ValueOf(u)
				default:
					args[j] = reflect.Zero(in)
				}
			}
			out := v.Method(i).Call(args)
			err, _ := out[len(out)-1].Interface().(error)
			refused := apperr.CodeOf(err) == apperr.CodeForbidden
			allowed := action == "" || slices.Contains(staff.RolesFor(action), role)
			if allowed == refused {
				t.Errorf("%s as %s: %v (allowed: %v)", m.Name, role, err, allowed)
			}
		}
	}
	if seen != len(methodActions) {
		t.Errorf("%d methods take a User, %d are listed", seen, len(methodActions))
	}
}
