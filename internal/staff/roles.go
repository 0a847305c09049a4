// Roles: what each kind of staff account may do, stated once.

package staff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clinic/booking/internal/apperr"
)

// The roles of staff accounts. Roles lists them in the order the accounts
// page offers them.
const (
	// RoleAdmin may do everything.
	RoleAdmin = "admin"
	// RoleStaff runs the calendar and the bookings and keeps specialists'
	// hours and overrides.
	RoleStaff = "staff"
	// RoleReception runs the calendar and the bookings only.
	RoleReception = "reception"
)

// Roles are every role an account can have.
var Roles = []string{RoleReception, RoleStaff, RoleAdmin}

// Action is something a staff member may or may not do.
type Action string

// The actions the role table knows.
const (
	// ActCalendar: see the calendar, with the specialists and types it offers.
	ActCalendar Action = "calendar"
	// ActBook: book for a patient.
	ActBook Action = "bookings.book"
	// ActCancel: cancel a booking.
	ActCancel Action = "bookings.cancel"
	// ActMove: move a booking.
	ActMove Action = "bookings.move"
	// ActSearch: find bookings by patient.
	ActSearch Action = "bookings.search"
	// ActAttendance: mark on the booking's day whether the patient arrived,
	// did not come or was seen, and undo the mark.
	ActAttendance Action = "bookings.attendance"
	// ActSpecialists: open the specialists' list and pages.
	ActSpecialists Action = "specialists"
	// ActSpecialistsEdit: add a specialist, rename one, set priority or active.
	ActSpecialistsEdit Action = "specialists.edit"
	// ActHours: see and set a specialist's weekly hours.
	ActHours Action = "hours"
	// ActOverrides: see, add and remove a specialist's date overrides.
	ActOverrides Action = "overrides"
	// ActClosures: see the closures, and close one specialist over a run
	// of dates (leave, training) or reopen them.
	ActClosures Action = "closures"
	// ActClinicClosures: close the whole clinic over a run of dates and
	// enter the year's public holidays.
	ActClinicClosures Action = "closures.clinic"
	// ActTypes: see and edit appointment types.
	ActTypes Action = "types"
	// ActAudit: read the audit log (it holds patient data).
	ActAudit Action = "audit"
	// ActAccounts: list, create, disable and enable staff accounts, and
	// make sign-in links for them.
	ActAccounts Action = "accounts"
	// ActKiosks: make and revoke kiosk device tokens.
	ActKiosks Action = "kiosks"
	// ActPassword: change one's own password.
	ActPassword Action = "password"
	// ActSettings: see and change the clinic's settings.
	ActSettings Action = "settings"
	// ActPatients: find a patient by e-mail address or phone number and
	// see every place their details are held.
	ActPatients Action = "patients"
	// ActErase: erase a patient's details everywhere.
	ActErase Action = "patients.erase"
	// ActSecondFactor: set up one's own second factor, and list and end
	// one's own sessions.
	ActSecondFactor Action = "second_factor"
	// ActSecondFactorAdmin: reset a colleague's second factor, and require
	// one of every account of the clinic.
	ActSecondFactorAdmin Action = "second_factor.admin"
	// ActPatientExport: hand a patient everything the clinic holds about
	// them (bookings, e-mails, waitlist places, audit entries).
	ActPatientExport Action = "patients.export"
)

// permission is one row of the role table: an action, who may do it, and
// how a refusal names it.
type permission struct {
	action Action
	roles  []string
	what   string // completes "Only ... of this clinic can ..."
}

// roleTable is the matrix of actions and roles. Every service method that
// takes a User checks its action here first; the web pages ask the same
// table which links and buttons to show.
var roleTable = []permission{
	{ActCalendar, []string{RoleAdmin, RoleStaff, RoleReception}, "see the calendar"},
	{ActBook, []string{RoleAdmin, RoleStaff, RoleReception}, "book for a patient"},
	{ActCancel, []string{RoleAdmin, RoleStaff, RoleReception}, "cancel a booking"},
	{ActMove, []string{RoleAdmin, RoleStaff, RoleReception}, "move a booking"},
	{ActSearch, []string{RoleAdmin, RoleStaff, RoleReception}, "search the bookings"},
	{ActAttendance, []string{RoleAdmin, RoleStaff, RoleReception}, "mark whether a patient came"},
	{ActSpecialists, []string{RoleAdmin, RoleStaff}, "open the specialists' pages"},
	{ActSpecialistsEdit, []string{RoleAdmin}, "add or edit specialists"},
	{ActHours, []string{RoleAdmin, RoleStaff}, "see or change specialists' weekly hours"},
	{ActOverrides, []string{RoleAdmin, RoleStaff}, "see or change specialists' date overrides"},
	{ActClosures, []string{RoleAdmin, RoleStaff}, "see or change specialists' closures"},
	{ActClinicClosures, []string{RoleAdmin}, "close the clinic or enter public holidays"},
	{ActTypes, []string{RoleAdmin}, "manage appointment types"},
	{ActAudit, []string{RoleAdmin}, "read the audit log"},
	{ActAccounts, []string{RoleAdmin}, "manage staff accounts"},
	{ActKiosks, []string{RoleAdmin}, "manage kiosk screens"},
	{ActPassword, []string{RoleAdmin, RoleStaff, RoleReception}, "change their own password"},
	{ActSettings, []string{RoleAdmin}, "change the clinic's settings"},
	{ActPatients, []string{RoleAdmin}, "look up what is held about a patient"},
	{ActErase, []string{RoleAdmin}, "erase a patient"},
	{ActSecondFactor, []string{RoleAdmin, RoleStaff, RoleReception}, "set up their own second factor or end their own sessions"},
	{ActSecondFactorAdmin, []string{RoleAdmin}, "reset a colleague's second factor or require one of everyone"},
	{ActPatientExport, []string{RoleAdmin}, "export a patient's data"},
}

// Actions are every action of the role table, in its order.
func Actions() []Action {
	out := make([]Action, len(roleTable))
	for i, p := range roleTable {
		out[i] = p.action
	}
	return out
}

// RolesFor are the roles that may do a; none for an action the table does
// not know.
func RolesFor(a Action) []string {
	for _, p := range roleTable {
		if p.action == a {
			return slices.Clone(p.roles)
		}
	}
	return nil
}

// May says whether u's role may do a: nil, or FORBIDDEN (403) naming what
// was refused and who may do it. An action the table does not know, or a
// role it does not know, is refused.
func (u User) May(a Action) error {
	for _, p := range roleTable {
		if p.action != a {
			continue
		}
		if slices.Contains(p.roles, u.Role) {
			return nil
		}
		return apperr.New(apperr.Forbidden, apperr.CodeForbidden,
			fmt.Sprintf("Only %s of this clinic can %s.", whoMay(p.roles), p.what))
	}
	return apperr.New(apperr.Forbidden, apperr.CodeForbidden, "Your account may not do that.")
}

// whoMay names roles for a refusal: "an admin", "an admin or staff member".
func whoMay(roles []string) string {
	names := make([]string, 0, len(roles))
	for _, r := range []string{RoleAdmin, RoleStaff, RoleReception} {
		if !slices.Contains(roles, r) {
			continue
		}
		switch r {
		case RoleAdmin:
			names = append(names, "an admin")
		case RoleStaff:
			names = append(names, "a staff member")
		case RoleReception:
			names = append(names, "reception")
		}
	}
	if len(names) == 0 {
		return "nobody"
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// validRole is whether role is one an account can have.
func validRole(role string) bool { return slices.Contains(Roles, role) }
