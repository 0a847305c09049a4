package privacy

// Reading one patient's export: every part is found from the patient's
// identity keys (bookings, waitlist places) or from the ids of those rows
// (e-mails, offers, audit entries), never from a time, a specialist or an
// opening they share with someone else.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/mail"
)

type reader struct {
	q   *db.Queries
	p   Patient
	loc *time.Location
	// Names of the clinic's types and specialists by id.
	types, specialists map[uuid.UUID]string

	bookingIDs []uuid.UUID
	bookings   map[uuid.UUID]bool
	entryIDs   []uuid.UUID
}

func (r *reader) read(ctx context.Context) (Export, error) {
	var out Export
	if err := r.clinic(ctx, &out); err != nil {
		return Export{}, err
	}
	steps := []func(context.Context, *Export) error{r.readBookings, r.readWaitlist, r.readEmails, r.readAudit}
	for _, step := range steps {
		if err := step(ctx, &out); err != nil {
			return Export{}, err
		}
	}
	return out, nil
}

func (r *reader) clinic(ctx context.Context, out *Export) error {
	c, err := r.q.ClinicGet(ctx, r.p.ClinicID)
	if err != nil {
		return fmt.Errorf("load clinic: %w", err)
	}
	if r.loc, err = time.LoadLocation(c.Timezone); err != nil {
		return fmt.Errorf("clinic's zone: %w", err)
	}
	out.Clinic = ExportClinic{Name: c.Name, Address: c.Address, ContactEmail: c.ContactEmail, ContactPhone: c.ContactPhone, TimeZone: c.Timezone}
	types, err := r.q.AppointmentTypeListByClinic(ctx, r.p.ClinicID)
	if err != nil {
		return fmt.Errorf("load types: %w", err)
	}
	r.types = make(map[uuid.UUID]string, len(types))
	for _, t := range types {
		r.types[t.ID] = t.Name
	}
	specs, err := r.q.SpecialistListByClinic(ctx, r.p.ClinicID)
	if err != nil {
		return fmt.Errorf("load specialists: %w", err)
	}
	r.specialists = make(map[uuid.UUID]string, len(specs))
	for _, s := range specs {
		r.specialists[s.ID] = s.Name
	}
	return nil
}

func (r *reader) span(start, end time.Time) Span {
	return Span{
		Start: start.In(r.loc).Format(time.RFC3339), End: end.In(r.loc).Format(time.RFC3339),
		StartUTC: start.UTC(), EndUTC: end.UTC(),
	}
}

// mine is id when it is one of the patient's bookings, else nil: a link
// to a row of someone else is not followed, nor shown.
func (r *reader) mine(id uuid.NullUUID) *uuid.UUID {
	if !id.Valid || !r.bookings[id.UUID] {
		return nil
	}
	v := id.UUID
	return &v
}

func (r *reader) readBookings(ctx context.Context, out *Export) error {
	rows, err := Bookings(ctx, r.q, r.p)
	if err != nil {
		return err
	}
	r.bookings = make(map[uuid.UUID]bool, len(rows))
	r.bookingIDs = make([]uuid.UUID, 0, len(rows))
	for _, b := range rows {
		r.bookingIDs = append(r.bookingIDs, b.ID)
		r.bookings[b.ID] = true
	}
	movedTo := map[uuid.UUID]uuid.UUID{}
	for _, b := range rows {
		if b.RescheduledFrom.Valid {
			movedTo[b.RescheduledFrom.UUID] = b.ID
		}
	}
	out.Bookings = make([]ExportBooking, 0, len(rows))
	for _, b := range rows {
		eb := ExportBooking{
			ID: b.ID, Time: r.span(b.SlotStart, b.SlotEnd),
			AppointmentType: r.types[b.AppointmentTypeID], Specialist: r.specialists[b.SpecialistID],
			Status: b.Status, CreatedAt: b.CreatedAt.UTC(), CancelledAt: utc(b.CancelledAt), CancelReason: b.CancelReason,
			MovedFrom: r.mine(b.RescheduledFrom), Attendance: b.Attendance, AttendanceAt: utc(b.AttendanceAt), LateCancel: b.LateCancel,
			Language: b.Language, Patient: Contact{Name: b.PatientName, Email: b.PatientEmail, Phone: b.PatientPhone},
		}
		if to, ok := movedTo[b.ID]; ok {
			eb.MovedTo = &to
		}
		out.Bookings = append(out.Bookings, eb)
	}
	return nil
}

func (r *reader) readWaitlist(ctx context.Context, out *Export) error {
	rows, err := r.q.PrivacyExportWaitlist(ctx, db.PrivacyExportWaitlistParams{
		ClinicID: r.p.ClinicID, EmailKey: r.p.EmailKey, PhoneKey: r.p.PhoneKey,
	})
	if err != nil {
		return fmt.Errorf("patient's waitlist places: %w", err)
	}
	out.Waitlist = make([]ExportPlace, 0, len(rows))
	r.entryIDs = make([]uuid.UUID, 0, len(rows))
	at := map[uuid.UUID]int{}
	for _, e := range rows {
		r.entryIDs = append(r.entryIDs, e.ID)
		at[e.ID] = len(out.Waitlist)
		spec := ""
		if e.SpecialistID.Valid {
			spec = r.specialists[e.SpecialistID.UUID]
		}
		out.Waitlist = append(out.Waitlist, ExportPlace{
			ID: e.ID, AppointmentType: r.types[e.AppointmentTypeID], Specialist: spec,
			FromDate: e.FromDate.Format(time.DateOnly), ToDate: e.ToDate.Format(time.DateOnly),
			PartsOfDay: orEmpty(e.Times), State: e.State, JoinedAt: e.JoinedAt.UTC(), ConfirmedAt: utc(e.ConfirmedAt),
			EndedAt: utc(e.EndedAt), BookingID: r.mine(e.BookingID), Language: e.Language,
			Patient: Contact{Name: e.PatientName, Email: e.PatientEmail, Phone: e.PatientPhone},
			Offers:  []ExportOffer{},
		})
	}
	offers, err := r.q.PrivacyExportOffers(ctx, r.entryIDs)
	if err != nil {
		return fmt.Errorf("patient's waitlist offers: %w", err)
	}
	for _, o := range offers {
		i, ok := at[o.EntryID]
		if !ok {
			continue
		}
		out.Waitlist[i].Offers = append(out.Waitlist[i].Offers, ExportOffer{
			ID: o.ID, Time: r.span(o.SlotStart, o.SlotEnd), Specialist: r.specialists[o.SpecialistID],
			State: o.State, OfferedAt: o.OfferedAt.UTC(), ExpiresAt: o.ExpiresAt.UTC(), EndedAt: utc(o.EndedAt),
			BookingID: r.mine(o.BookingID),
		})
	}
	return nil
}

func (r *reader) readEmails(ctx context.Context, out *Export) error {
	rows, err := r.q.PrivacyExportMessages(ctx, db.PrivacyExportMessagesParams{
		ClinicID: r.p.ClinicID, BookingIds: r.bookingIDs, EntryIds: r.entryIDs, EmailKey: r.p.EmailKey,
	})
	if err != nil {
		return fmt.Errorf("patient's e-mails: %w", err)
	}
	out.Emails = make([]ExportEmail, 0, len(rows))
	for _, m := range rows {
		// A list of bookings asked for by address names no booking: it is
		// the patient's when its address is one spelling of theirs.
		if !m.BookingID.Valid && !m.EntryID.Valid && identity.EmailKey(m.Recipient) != r.p.EmailKey {
			continue
		}
		e := ExportEmail{
			ID: m.ID, Kind: m.Kind, Status: m.Status, To: m.Recipient, BookingID: r.mine(m.BookingID),
			Language: m.Language, CreatedAt: m.CreatedAt.UTC(), SendAt: m.SendAt.UTC(), SentAt: utc(m.AcceptedAt),
			Attempts: int(m.Attempts),
		}
		if m.EntryID.Valid && slices.Contains(r.entryIDs, m.EntryID.UUID) {
			id := m.EntryID.UUID
			e.WaitlistPlaceID = &id
		}
		if m.CopySubject.Valid {
			subject, text := m.CopySubject.String, textOf(m.CopyRaw)
			e.Subject, e.Text = &subject, &text
		}
		out.Emails = append(out.Emails, e)
	}
	return nil
}

// textOf is the plain text of a kept message; the whole message when it
// cannot be taken apart, so that nothing kept is left out.
func textOf(raw []byte) string {
	p, err := mail.Parse(raw)
	if err != nil || p.Text == "" {
		return string(raw)
	}
	return p.Text
}

func (r *reader) readAudit(ctx context.Context, out *Export) error {
	messageIDs := make([]string, len(out.Emails))
	for i, m := range out.Emails {
		messageIDs[i] = m.ID.String()
	}
	rows, err := r.q.PrivacyExportAudit(ctx, db.PrivacyExportAuditParams{
		ClinicID: r.p.ClinicID, BookingIds: strs(r.bookingIDs), EntryIds: strs(r.entryIDs), MessageIds: messageIDs,
	})
	if err != nil {
		return fmt.Errorf("patient's audit entries: %w", err)
	}
	out.Audit = make([]ExportEvent, 0, len(rows))
	for _, a := range rows {
		by := Actor{Kind: a.Actor}
		if strings.HasPrefix(a.Actor, "staff:") {
			by = Actor{Kind: "staff", Name: a.StaffName.String, Role: a.StaffRole.String}
		}
		out.Audit = append(out.Audit, ExportEvent{
			At: a.At.UTC(), Action: a.Action, Entity: a.Entity, EntityID: a.EntityID, By: by, Reason: a.Reason,
		})
	}
	return nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

func strs(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
