package records

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// PatientExport answers GET /staff/patients/export?email=&phone=&format=
// (admins): the patient's data as a printable page, or with format=json
// as a file to download; the Patients page links to both. Every export
// writes its audit row. Without an address or number it is the Patients
// page, where one is typed.
func (s *Records) PatientExport(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActPatientExport); err != nil {
		return err
	}
	// The answer is one patient's data: no cache anywhere may keep it.
	c.Response().Header().Set("Cache-Control", "no-store")
	email, phone, format := strings.TrimSpace(c.QueryParam("email")), strings.TrimSpace(c.QueryParam("phone")), c.QueryParam("format")
	if format != "" && format != "html" && format != "json" {
		return apperr.Invalidf("format", "format must be html or json.")
	}
	if email == "" && phone == "" && format != "json" {
		return c.Redirect(http.StatusSeeOther, "/staff/patients")
	}
	x, err := s.deps.PatientExport.Export(c.Request().Context(), u, email, phone)
	if ae := apperr.As(err); ae != nil && format != "json" && (ae.Kind == apperr.Invalid || ae.Kind == apperr.NotFound) {
		return s.renderPatients(c, httpx.StatusOf[ae.Kind], views.PatientsVM{Email: email, Phone: phone, Problem: contactProblem(c, ae)})
	}
	if err != nil {
		return err
	}
	if format == "json" {
		body, err := x.JSON()
		if err != nil {
			return err
		}
		// The file's name says whose data it is only by the export's id,
		// which the audit row of the export names too.
		name := "patient-export-" + x.ExportedAt.Format("2006-01-02") + "-" + x.ID.String()[:8] + ".json"
		c.Response().Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		return c.Blob(http.StatusOK, "application/json; charset=utf-8", body)
	}
	vm, err := exportVM(exportWords{l: httpx.Tr(c), typeName: s.typeNames(c)}, x, views.PatientExportURL(email, phone, "json"))
	if err != nil {
		return err
	}
	vm.Nav = s.kit.Nav(c, "patients")
	return s.kit.Page(c, http.StatusOK, httpx.T(c, "records.export.page"), views.PatientExport(vm))
}

// exportWords are the reader's words for the export's stored values.
type exportWords struct {
	l        *i18n.Localizer
	typeName func(string) string
}

// exportVM is the export as its page shows it, times in the clinic's zone;
// statuses, states and types are in the reader's words, the patient's
// details and the e-mails' texts as stored.
func exportVM(w exportWords, x privacy.Export, jsonURL string) (views.PatientExportVM, error) {
	l := w.l
	loc, err := time.LoadLocation(x.Clinic.TimeZone)
	if err != nil {
		return views.PatientExportVM{}, err
	}
	at := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.In(loc).Format("2006-01-02 15:04")
	}
	span := func(sp privacy.Span) (local, utc string) {
		return httpx.StaffWhen(l, sp.StartUTC, loc) + "–" + sp.EndUTC.In(loc).Format("15:04"),
			sp.StartUTC.Format("2006-01-02 15:04") + "–" + sp.EndUTC.Format("15:04") + " UTC"
	}
	vm := views.PatientExportVM{
		ExportID: x.ID.String(), ExportedAt: at(&x.ExportedAt), ExportedBy: actorText(l, x.ExportedBy), JSONURL: jsonURL,
		Clinic: views.PatientExportClinicVM{Name: x.Clinic.Name, Address: x.Clinic.Address,
			ContactEmail: x.Clinic.ContactEmail, ContactPhone: x.Clinic.ContactPhone, TimeZone: x.Clinic.TimeZone},
		For: strings.TrimSpace(x.RequestedFor.Email + " " + x.RequestedFor.Phone),
	}
	for _, b := range x.Bookings {
		local, utc := span(b.Time)
		cancelled := at(b.CancelledAt)
		if b.MovedTo != nil {
			cancelled = "" // "Moved to" says it
		}
		vm.Bookings = append(vm.Bookings, views.PatientExportBookingVM{
			ID: b.ID.String(), Time: local, TimeUTC: utc, Type: w.typeName(b.AppointmentType), Specialist: b.Specialist,
			Status: words(l, statusPrefix, b.Status), Created: at(&b.CreatedAt), Cancelled: cancelled, CancelReason: b.CancelReason,
			Attendance: words(l, attendancePrefix, b.Attendance), MovedFrom: idText(b.MovedFrom), MovedTo: idText(b.MovedTo),
			Name: b.Patient.Name, Email: b.Patient.Email, Phone: b.Patient.Phone,
		})
	}
	for _, m := range x.Emails {
		e := views.PatientExportEmailVM{ID: m.ID.String(), Kind: words(l, kindPrefix, m.Kind), Status: words(l, mailPrefix, m.Status), To: m.To,
			Created: at(&m.CreatedAt), Sent: at(m.SentAt), HasCopy: m.Text != nil}
		switch {
		case m.BookingID != nil:
			e.About = l.T("records.export.about_booking", map[string]any{"ID": m.BookingID.String()})
		case m.WaitlistPlaceID != nil:
			e.About = l.T("records.export.about_place", map[string]any{"ID": m.WaitlistPlaceID.String()})
		}
		if e.Sent == "" {
			e.Sent = l.T("records.export.not_yet", nil)
		}
		if e.HasCopy {
			e.Subject, e.Text = *m.Subject, *m.Text
		}
		vm.Emails = append(vm.Emails, e)
	}
	for _, p := range x.Waitlist {
		parts := make([]string, len(p.PartsOfDay))
		for i, part := range p.PartsOfDay {
			parts[i] = words(l, partPrefix, part)
		}
		pv := views.PatientExportPlaceVM{ID: p.ID.String(), Type: w.typeName(p.AppointmentType), Specialist: p.Specialist,
			Days:       l.T("records.patients.days", map[string]any{"From": p.FromDate, "To": p.ToDate}),
			PartsOfDay: strings.Join(parts, ", "), State: words(l, placePrefix, p.State),
			Joined: at(&p.JoinedAt), Confirmed: at(p.ConfirmedAt), Ended: at(p.EndedAt),
			Name: p.Patient.Name, Email: p.Patient.Email, Phone: p.Patient.Phone}
		if pv.Specialist == "" {
			pv.Specialist = l.T("records.export.any_specialist", nil)
		}
		if pv.PartsOfDay == "" {
			pv.PartsOfDay = l.T("records.export.any_time", nil)
		}
		for _, o := range p.Offers {
			local, _ := span(o.Time)
			pv.Offers = append(pv.Offers, views.PatientExportOfferVM{Time: local, Specialist: o.Specialist, State: words(l, offerPrefix, o.State),
				Offered: at(&o.OfferedAt), Expires: at(&o.ExpiresAt)})
		}
		vm.Places = append(vm.Places, pv)
	}
	for _, a := range x.Audit {
		vm.Audit = append(vm.Audit, views.PatientExportEventVM{At: at(&a.At), Action: a.Action,
			Entity: words(l, entityPrefix, a.Entity), By: actorText(l, a.By), Reason: a.Reason})
	}
	return vm, nil
}

func actorText(l *i18n.Localizer, a privacy.Actor) string {
	switch a.Kind {
	case "staff":
		name := a.Name
		if name == "" {
			name = l.T("records.export.staff_member", nil)
		}
		if a.Role == "" {
			return name
		}
		return name + " (" + words(l, "signin.role.", a.Role) + ")"
	case staff.ActorCLI:
		return l.T("records.export.cli", nil)
	}
	return a.Kind
}

func idText(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}
