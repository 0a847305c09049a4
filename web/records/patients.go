// One patient's data: found by e-mail address or phone number, shown, and
// erased on request (admins only; the privacy service checks the role).

package records

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// PatientsPage answers GET /staff/patients?email=&phone=.
func (s *Records) PatientsPage(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActPatients); err != nil {
		return err
	}
	vm := views.PatientsVM{Email: strings.TrimSpace(c.QueryParam("email")), Phone: strings.TrimSpace(c.QueryParam("phone"))}
	if vm.Email == "" && vm.Phone == "" {
		return s.renderPatients(c, http.StatusOK, vm)
	}
	return s.showPatient(c, http.StatusOK, vm)
}

// showPatient renders what is held about vm's patient.
func (s *Records) showPatient(c echo.Context, status int, vm views.PatientsVM) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	h, err := s.deps.Privacy.Holdings(ctx, u, vm.Email, vm.Phone)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		vm.Problem = contactProblem(c, ae)
		return s.renderPatients(c, http.StatusUnprocessableEntity, vm)
	}
	if err != nil {
		return err
	}
	if !h.Empty() {
		if err := s.deps.Access.Record(ctx, h.Access(u)); err != nil {
			return err
		}
	}
	loc, _ := s.deps.Slots.Zone(ctx, u.ClinicID)
	l := httpx.Tr(c)
	typeName := s.typeNames(c)
	const when = "2006-01-02 15:04"
	vm.Searched, vm.CanErase, vm.Names, vm.Drafts = true, !h.Empty(), h.Names, h.Drafts
	for _, b := range h.Bookings {
		status := words(l, statusPrefix, b.Status)
		if b.Future {
			status = l.T("records.patients.to_come", map[string]any{"Status": status})
		}
		vm.Bookings = append(vm.Bookings, views.PatientBookingVM{When: b.Start.In(loc).Format(when), Type: typeName(b.Type), Specialist: b.Specialist, Status: status,
			LateCancel: b.LateCancel})
		if b.Attendance == desk.NoShow {
			vm.NoShows++
		}
		if b.LateCancel {
			vm.LateCancels++
		}
	}
	for _, m := range h.Messages {
		vm.Messages = append(vm.Messages, views.PatientMessageVM{Kind: words(l, kindPrefix, m.Kind), Status: words(l, mailPrefix, m.Status), When: m.CreatedAt.In(loc).Format(when)})
	}
	for _, p := range h.Places {
		days := l.T("records.patients.days", map[string]any{"From": p.From.Format(time.DateOnly), "To": p.To.Format(time.DateOnly)})
		vm.Places = append(vm.Places, views.PatientPlaceVM{Type: typeName(p.Type), Days: days,
			State: words(l, placePrefix, p.State), Joined: p.JoinedAt.In(loc).Format(when)})
	}
	vm.Others = otherContacts(l, vm.Email, vm.Phone, h.Others)
	for _, a := range h.Audit {
		vm.Audit = append(vm.Audit, views.PatientAuditVM{When: a.At.In(loc).Format(when), Actor: a.Actor, Action: a.Action, Entity: words(l, entityPrefix, a.Entity)})
	}
	return s.renderPatients(c, status, vm)
}

func (s *Records) renderPatients(c echo.Context, status int, vm views.PatientsVM) error {
	vm.Nav = s.kit.Nav(c, "patients")
	return s.kit.Page(c, status, httpx.T(c, "records.patients.title"), views.Patients(vm))
}

// PatientErase answers POST /staff/patients/erase: the address or number
// typed again in confirm must be the one searched for.
func (s *Records) PatientErase(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	if err := u.May(privacy.ActErase); err != nil {
		return err
	}
	vm := views.PatientsVM{Email: strings.TrimSpace(c.FormValue("email")), Phone: strings.TrimSpace(c.FormValue("phone"))}
	confirm := strings.TrimSpace(c.FormValue("confirm"))
	if confirm == "" || (!strings.EqualFold(confirm, vm.Email) && confirm != vm.Phone) {
		vm.Problem = httpx.T(c, "records.patients.erase_confirm")
		return s.showPatient(c, http.StatusUnprocessableEntity, vm)
	}
	// Read before the erasure: the session this request writes back must
	// not carry the patient's draft or a notice naming them.
	h, err := s.deps.Privacy.Holdings(ctx, u, vm.Email, vm.Phone)
	if err != nil {
		return err
	}
	n, err := s.deps.Privacy.Erase(ctx, u, vm.Email, vm.Phone)
	if err != nil {
		return err
	}
	privacy.Forget(ctx, s.deps.Sessions, h)
	done := views.PatientsVM{Notice: httpx.Tr(c).T("records.patients.erased", map[string]any{
		"Bookings": n.Bookings, "Cancelled": n.Cancelled, "Messages": n.Messages, "Places": n.Places, "Audit": n.Audit, "Sessions": n.Sessions,
	})}
	return s.renderPatients(c, http.StatusOK, done)
}

// otherContacts are the contacts on the rows found that the search did not
// name, each linked to the search that adds it: in place of the empty
// field, or alone when both were given.
func otherContacts(l *i18n.Localizer, email, phone string, others []privacy.Contact) []views.PatientOtherVM {
	out := make([]views.PatientOtherVM, 0, len(others))
	for _, o := range others {
		q := url.Values{}
		vm := views.PatientOtherVM{Kind: l.T("records.email", nil), Value: o.Email}
		if o.Email != "" {
			q.Set("email", o.Email)
			if email == "" && phone != "" {
				q.Set("phone", phone)
			}
		} else {
			vm.Kind, vm.Value = l.T("records.phone", nil), o.Phone
			q.Set("phone", o.Phone)
			if phone == "" && email != "" {
				q.Set("email", email)
			}
		}
		vm.Search = templ.SafeURL("/staff/patients?" + q.Encode())
		out = append(out, vm)
	}
	return out
}
