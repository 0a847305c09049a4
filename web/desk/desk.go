package desk

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The front desk's dialogs: book a free time by clicking it (the dialog
// holds the time while it is open) and move a booking by choosing a free
// time. Both render into the page's #desk-dialog container.

// desk is the staff desk service.
func (s *FrontDesk) desk() *desk.Desk { return s.deps.Desk }

// DeskNew answers POST /staff/desk/new?specialist=&start= (a POST: it takes a hold, so it needs the CSRF token and counts as a staff write): the booking
// dialog for that time, which it holds for the dialog.
func (s *FrontDesk) DeskNew(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActBook); err != nil {
		return err
	}
	spID, start, err := readDeskTime(c.QueryParam("specialist"), c.QueryParam("start"))
	if err != nil {
		return err
	}
	client := desk.NewDeskClient(u)
	slot, h, err := s.desk().Hold(c.Request().Context(), u, client, spID, start, uuid.Nil)
	vm := s.deskVM(c, slot, client, uuid.Nil)
	if err != nil {
		return s.deskRefusal(c, vm, err, false)
	}
	vm.Held, vm.HeldUntil = true, h.ExpiresAt.Format(time.RFC3339)
	vm.Types = s.typeOptions(c, slot, h.AppointmentTypeID)
	return httpx.Render(c, http.StatusOK, nil, views.DeskDialog(vm))
}

// readDeskTime reads the specialist and the start a desk form names.
func readDeskTime(sp, start string) (uuid.UUID, time.Time, error) {
	id, err := uuid.Parse(sp)
	if err != nil {
		return uuid.Nil, time.Time{}, apperr.NotFoundf("specialist", "No such specialist at this clinic.")
	}
	t, err := time.Parse(time.RFC3339, start)
	if err != nil {
		return uuid.Nil, time.Time{}, apperr.Invalidf("start", "start must be a time in RFC 3339 (2026-03-15T09:00:00Z).")
	}
	return id, t, nil
}

// deskVM is the dialog for a slot, without the patient's details.
func (s *FrontDesk) deskVM(c echo.Context, slot desk.DeskSlot, client string, typeID uuid.UUID) views.DeskDialogVM {
	vm := views.DeskDialogVM{
		CSRF: s.kit.CSRFToken(c), ClientID: client,
		SpecialistID: slot.Specialist.ID.String(), SpecialistName: slot.Specialist.Name,
		StartUTC: slot.Start.UTC().Format(time.RFC3339), IdempotencyKey: uuid.NewString(),
		Types: s.typeOptions(c, slot, typeID),
	}
	if slot.Location != nil {
		vm.When = httpx.Tr(c).LongDateTime(slot.Start.In(slot.Location))
	}
	return vm
}

// typeOptions are the types that fit the slot, named in the viewer's
// language with their length.
func (s *FrontDesk) typeOptions(c echo.Context, slot desk.DeskSlot, selected uuid.UUID) []views.OptionVM {
	tr := httpx.Tr(c)
	names, err := s.typeNames(c.Request().Context(), httpx.StaffUser(c).ClinicID, tr.Lang())
	if err != nil {
		names = nil
	}
	out := make([]views.OptionVM, len(slot.Types))
	for i, t := range slot.Types {
		label := typeName(names, t.ID, t.Name) + " (" + tr.T("desk.word.minutes", map[string]any{"N": t.DurationMin}) + ")"
		out[i] = views.OptionVM{Value: t.ID.String(), Label: label, Selected: t.ID == selected}
	}
	return out
}

// deskRefusal shows a refusal in the dialog, with what was typed kept;
// held says the dialog still holds its time (a field to correct). A time
// that is not there for this clinic, a forbidden action and internal
// failures take the error page. Field errors answer 422, which htmx
// swaps in as it does the conflicts.
func (s *FrontDesk) deskRefusal(c echo.Context, vm views.DeskDialogVM, err error, held bool) error {
	ae := apperr.As(err)
	if ae == nil || ae.Kind == apperr.Internal || ae.Kind == apperr.NotFound || ae.Kind == apperr.Forbidden || ae.Kind == apperr.Unauthorized {
		return err
	}
	status := httpx.StatusOf[ae.Kind]
	if ae.Kind == apperr.Invalid {
		status = http.StatusUnprocessableEntity
	}
	vm.Error, vm.ErrorField, vm.Held = refusal(httpx.Tr(c), ae), deskField(ae.Field()), held && len(vm.Types) > 0
	httpx.SetRetryAfter(c, err)
	return httpx.Render(c, status, nil, views.DeskDialog(vm))
}

// deskField is the dialog's name for a field an error names.
func deskField(f string) string {
	switch f {
	case "patient.name", "name":
		return "name"
	case "patient.email", "email":
		return "email"
	case "patient.phone", "phone":
		return "phone"
	case "appointmentTypeId", "type":
		return "type"
	}
	return ""
}

// DeskHeartbeat answers POST /staff/desk/heartbeat: it keeps the dialog's
// hold for another while, for the type now chosen.
func (s *FrontDesk) DeskHeartbeat(c echo.Context) error {
	u := httpx.StaffUser(c)
	spID, start, err := readDeskTime(c.FormValue("specialist"), c.FormValue("start"))
	if err != nil {
		return err
	}
	typeID, _ := uuid.Parse(c.FormValue("type"))
	_, h, err := s.desk().Hold(c.Request().Context(), u, c.FormValue("client"), spID, start, typeID)
	if err != nil {
		ae := apperr.As(err)
		if ae == nil || ae.Kind == apperr.Internal || ae.Kind == apperr.Forbidden || ae.Kind == apperr.NotFound {
			return err
		}
		return httpx.Render(c, http.StatusOK, nil, views.DeskKeep("", refusal(httpx.Tr(c), ae)))
	}
	return httpx.Render(c, http.StatusOK, nil, views.DeskKeep(h.ExpiresAt.Format(time.RFC3339), ""))
}

// DeskRelease answers POST /staff/desk/release: the dialog's holds go and
// the container is emptied. A dialog that holds nothing (a move) only
// closes.
func (s *FrontDesk) DeskRelease(c echo.Context) error {
	u := httpx.StaffUser(c)
	if client := c.FormValue("client"); client != "" {
		if err := s.desk().Release(c.Request().Context(), u, client); err != nil {
			return err
		}
	}
	return c.HTML(http.StatusOK, "")
}

// DeskBook answers POST /staff/desk/book. The form's Idempotency-Key (or
// the header) makes a second submit answer with the first one's booking.
func (s *FrontDesk) DeskBook(c echo.Context) error {
	u := httpx.StaffUser(c)
	ctx := c.Request().Context()
	spID, start, err := readDeskTime(c.FormValue("specialist"), c.FormValue("start"))
	if err != nil {
		return err
	}
	key := c.FormValue("Idempotency-Key")
	if h := c.Request().Header.Get("Idempotency-Key"); h != "" {
		key = h
	}
	req := desk.DeskBooking{
		ClientID: c.FormValue("client"), SpecialistID: spID, Start: start, IdempotencyKey: key,
		Patient: booking.Patient{Name: c.FormValue("name"), Email: c.FormValue("email"), Phone: c.FormValue("phone")},
	}
	typeID, typeErr := uuid.Parse(c.FormValue("type"))
	if typeErr == nil {
		req.AppointmentTypeID = typeID
		var booked desk.DeskBooked
		if booked, err = s.desk().Book(ctx, u, req); err == nil {
			return s.deskBooked(c, booked)
		}
	} else {
		err = apperr.Invalidf("type", "Choose an appointment type.")
	}
	// The dialog again, with what was typed and why it was refused.
	slot, slotErr := s.desk().Slot(ctx, u, spID, start)
	vm := s.deskVM(c, slot, req.ClientID, typeID)
	vm.IdempotencyKey = key
	vm.Name, vm.Email, vm.Phone = req.Patient.Name, req.Patient.Email, req.Patient.Phone
	vm.NoShows, vm.LateCancels = s.noShows(ctx, u, req.Patient.Email, req.Patient.Phone)
	if slotErr != nil && apperr.As(slotErr) != nil && apperr.As(slotErr).Kind == apperr.NotFound {
		return slotErr
	}
	held := slotErr == nil && (apperr.As(err) != nil && (apperr.As(err).Kind == apperr.Invalid || apperr.As(err).Kind == apperr.Gone))
	return s.deskRefusal(c, vm, err, held)
}

// deskBooked closes the dialog: in its place, what was booked and the
// patient's manage link.
func (s *FrontDesk) deskBooked(c echo.Context, b desk.DeskBooked) error {
	loc, err := s.deps.Slots.Zone(c.Request().Context(), httpx.StaffUser(c).ClinicID)
	if err != nil {
		return err
	}
	if b.Replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	tr := httpx.Tr(c)
	msg := tr.T("desk.dialog.booked", map[string]any{"Patient": b.PatientName, "When": when(tr, b.Start, loc)})
	return httpx.Render(c, http.StatusCreated, nil, views.DeskBooked(msg, "/manage/"+b.ManageToken))
}

// DeskNoShows answers GET /staff/desk/noshows?email=&phone=: how often
// the patient typed in did not come before.
func (s *FrontDesk) DeskNoShows(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActBook); err != nil {
		return err
	}
	n, late := s.noShows(c.Request().Context(), u, c.QueryParam("email"), c.QueryParam("phone"))
	return httpx.Render(c, http.StatusOK, nil, views.DeskNoShows(n, late))
}

// noShows counts the patient's earlier no-shows and late cancellations;
// 0 when nothing was typed or a count fails (they are hints, never a
// reason to refuse).
func (s *FrontDesk) noShows(ctx context.Context, u staff.User, email, phone string) (n, late int) {
	email, phone = strings.TrimSpace(email), strings.TrimSpace(phone)
	if email == "" && phone == "" {
		return 0, 0
	}
	n, err := s.deps.StaffBookings.NoShows(ctx, u, email, phone)
	if err != nil {
		s.deps.Logger.Warn("count no-shows", "err", err)
		n = 0
	}
	late, err = s.deps.StaffBookings.LateCancels(ctx, u, email, phone)
	if err != nil {
		s.deps.Logger.Warn("count late cancellations", "err", err)
		late = 0
	}
	return n, late
}

// DeskPatients answers GET /staff/desk/patients?name=&phone=: the patients
// the clinic has seen whose name or phone holds what was typed, to fill
// the dialog with. What it shows is recorded as any staff read of
// patients is.
func (s *FrontDesk) DeskPatients(c echo.Context) error {
	u := httpx.StaffUser(c)
	found, err := s.deps.StaffBookings.LookUpPatients(c.Request().Context(), u, c.QueryParam("name"), c.QueryParam("phone"))
	if err != nil {
		return err
	}
	out := make([]views.DeskMatchVM, len(found))
	ids := make([]uuid.UUID, len(found))
	for i, m := range found {
		out[i] = views.DeskMatchVM{Name: m.Name, Phone: m.Phone, Email: m.Email}
		ids[i] = m.BookingID
	}
	if len(ids) > 0 {
		if err := s.record(c, privacy.PagePatientLookup, ids, nil); err != nil {
			return err
		}
	}
	return httpx.Render(c, http.StatusOK, nil, views.DeskMatches(out))
}
