// The outbox page: the e-mails the cap on one address held back, which an
// admin may send anyway; and the development outbox: without a mail
// server configured, the e-mails patients would get are kept, and staff
// read them here (the list, one message with its text and HTML parts,
// the raw message and its calendar file). With a mail server that list
// stays empty and says so.

package records

import (
	"fmt"
	"net/http"
	netmail "net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// outboxAction is what reading the outbox asks of the role table: the
// messages show what the booking search shows (patients' names, addresses
// and appointments), and the desk is who answers "I got no e-mail".
const outboxAction = staff.ActSearch

// OutboxNav shows the Outbox link in the staff header, to those who may
// read it, while messages are kept rather than sent, or while the clinic
// has messages held back to show.
func (s *Records) OutboxNav(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := httpx.StaffUser(c)
		if u.May(outboxAction) == nil && (s.deps.Outbox.Stored() || s.anyHeld(c, u)) {
			c.SetRequest(c.Request().WithContext(views.WithOutboxLink(c.Request().Context())))
		}
		return next(c)
	}
}

// anyHeld says the clinic has messages held back; a failure to tell
// leaves the link out rather than failing the page (the outbox page
// itself still answers).
func (s *Records) anyHeld(c echo.Context, u staff.User) bool {
	held, err := s.deps.Outbox.AnyHeld(c.Request().Context(), u.ClinicID)
	if err != nil {
		httpx.LoggerFrom(c).Warn("outbox link", "err", err)
	}
	return held
}

// OutboxPage answers GET /staff/outbox: the clinic's kept messages, newest
// first.
func (s *Records) OutboxPage(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(outboxAction); err != nil {
		return err
	}
	ctx := c.Request().Context()
	vm := views.OutboxVM{Nav: s.kit.Nav(c, "outbox"), Stored: s.deps.Outbox.Stored()}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	var shown []uuid.UUID
	if vm.Held, shown, err = s.heldRows(c, u, loc); err != nil {
		return err
	}
	if vm.Stored {
		q, err := readCopyQuery(c)
		if err != nil {
			return err
		}
		copies, more, err := s.deps.Outbox.SearchCopies(ctx, u, q)
		if err != nil {
			return err
		}
		vm.Search = outboxSearch(c, q, more)
		l := httpx.Tr(c)
		for _, cp := range copies {
			row := views.OutboxRowVM{
				When: httpx.StaffWhen(l, cp.Created, loc), Recipient: cp.Recipient, Subject: cp.Subject,
				URL: outboxPath(cp.MessageID), Kind: words(l, kindPrefix, cp.Kind),
			}
			if cp.BookingID != uuid.Nil {
				row.BookingURL = "/staff/bookings/" + cp.BookingID.String()
			}
			vm.Rows = append(vm.Rows, row)
			shown = append(shown, cp.MessageID)
		}
	}
	if err := s.recordMessages(c, shown...); err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, httpx.T(c, "records.outbox.title"), views.Outbox(vm))
}

func outboxPath(id uuid.UUID) string { return "/staff/outbox/" + id.String() }

// kindPrefix names the words of each kind of message
// ("records.kind.confirmation").
const kindPrefix = "records.kind."

// kindOrder are the kinds of message in the order the search offers them.
var kindOrder = []string{outbox.KindConfirmation, outbox.KindReminder, outbox.KindChange, outbox.KindCancellation,
	outbox.KindLookup, outbox.KindWaitlistJoined, outbox.KindWaitlistOffer, outbox.KindSeries, outbox.KindSeriesCancellation, outbox.KindWaitlistWithdrawn}

// readCopyQuery reads the outbox search: ?to= (part of the address),
// ?kind=, ?booking= (a booking's id) and ?page=.
func readCopyQuery(c echo.Context) (outbox.CopyQuery, error) {
	q := outbox.CopyQuery{Recipient: c.QueryParam("to"), Kind: c.QueryParam("kind"), Page: 1}
	if q.Kind != "" && !slices.Contains(kindOrder, q.Kind) {
		return q, apperr.Invalidf("kind", "kind must be one of the kinds the list offers.")
	}
	if b := strings.TrimSpace(c.QueryParam("booking")); b != "" {
		id, err := uuid.Parse(b)
		if err != nil {
			return q, apperr.Invalidf("booking", "booking must be a booking's id, as its page's address ends.")
		}
		q.BookingID = id
	}
	if p := c.QueryParam("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 10000 {
			return q, apperr.Invalidf("page", "page must be a number from 1.")
		}
		q.Page = n
	}
	return q, nil
}

// outboxSearch is the search form as filled in and the pages around.
func outboxSearch(c echo.Context, q outbox.CopyQuery, more bool) views.OutboxSearchVM {
	vm := views.OutboxSearchVM{To: q.Recipient, Kind: q.Kind, Page: q.Page}
	if q.BookingID != uuid.Nil {
		vm.Booking = q.BookingID.String()
	}
	l := httpx.Tr(c)
	for _, k := range kindOrder {
		vm.Kinds = append(vm.Kinds, views.OptionVM{Value: k, Label: words(l, kindPrefix, k), Selected: k == q.Kind})
	}
	at := func(page int) string {
		v := url.Values{}
		for k, s := range map[string]string{"to": vm.To, "kind": vm.Kind, "booking": vm.Booking} {
			if s != "" {
				v.Set(k, s)
			}
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return "/staff/outbox"
		}
		return "/staff/outbox?" + v.Encode()
	}
	if q.Page > 1 {
		vm.PrevURL = at(q.Page - 1)
	}
	if more {
		vm.NextURL = at(q.Page + 1)
	}
	return vm
}

// heldRows are the clinic's held-back messages as the page lists them,
// and their ids.
func (s *Records) heldRows(c echo.Context, u staff.User, loc *time.Location) ([]views.OutboxHeldVM, []uuid.UUID, error) {
	held, err := s.deps.Outbox.Held(c.Request().Context(), u)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]uuid.UUID, len(held))
	maySend := u.May(outbox.ActSendHeld) == nil
	rows := make([]views.OutboxHeldVM, len(held))
	l := httpx.Tr(c)
	for i, h := range held {
		rows[i] = views.OutboxHeldVM{
			When: httpx.StaffWhen(l, h.At, loc), Recipient: h.Recipient, Kind: h.Kind,
			KindWords: words(l, kindPrefix, h.Kind), Reason: heldWords(l, h.Reason),
		}
		if h.BookingID != uuid.Nil {
			rows[i].BookingURL = "/staff/bookings/" + h.BookingID.String()
		}
		if maySend {
			rows[i].SendURL = "/staff/outbox/held/" + h.ID.String() + "/send"
		}
		ids[i] = h.ID
	}
	return rows, ids, nil
}

// recordMessages records a view of the clinic's e-mails (their
// recipients, and with them their bookings and waitlist places).
func (s *Records) recordMessages(c echo.Context, ids ...uuid.UUID) error {
	u := httpx.StaffUser(c)
	return s.deps.Access.Record(c.Request().Context(), privacy.Access{
		ClinicID: u.ClinicID, StaffID: u.ID, Page: privacy.PageOutbox, Messages: ids,
	})
}

// OutboxSendHeld answers POST /staff/outbox/held/:id/send: an admin sends
// a held-back message anyway.
func (s *Records) OutboxSendHeld(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return apperr.NotFoundf("id", "No such held-back message.")
	}
	if err := s.deps.Outbox.SendHeld(c.Request().Context(), httpx.StaffUser(c), id); err != nil {
		return err
	}
	return httpx.Redirect(c, "/staff/outbox")
}

// loadCopy is the kept message the path names, of the viewer's clinic,
// taken apart.
func (s *Records) loadCopy(c echo.Context) (outbox.Copy, mail.Parsed, error) {
	u := httpx.StaffUser(c)
	if err := u.May(outboxAction); err != nil {
		return outbox.Copy{}, mail.Parsed{}, err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return outbox.Copy{}, mail.Parsed{}, apperr.NotFoundf("id", "No such message.")
	}
	cp, err := s.deps.Outbox.CopyOf(c.Request().Context(), u, id)
	if err != nil {
		return outbox.Copy{}, mail.Parsed{}, err
	}
	pm, err := mail.Parse(cp.Raw)
	if err != nil {
		return outbox.Copy{}, mail.Parsed{}, fmt.Errorf("read kept message %s: %w", cp.MessageID, err)
	}
	if err := s.recordMessages(c, cp.MessageID); err != nil {
		return outbox.Copy{}, mail.Parsed{}, err
	}
	return cp, pm, nil
}

// OutboxMessage answers GET /staff/outbox/:id: one message.
func (s *Records) OutboxMessage(c echo.Context) error {
	cp, pm, err := s.loadCopy(c)
	if err != nil {
		return err
	}
	loc, err := s.deps.Slots.Zone(c.Request().Context(), httpx.StaffUser(c).ClinicID)
	if err != nil {
		return err
	}
	base := outboxPath(cp.MessageID)
	vm := views.OutboxMessageVM{
		Nav: s.kit.Nav(c, "outbox"), Subject: pm.Subject, From: readable(pm.From), To: readable(pm.To),
		When: httpx.StaffWhen(httpx.Tr(c), cp.Created, loc), Text: linkify(pm.Text), EMLURL: base + "/message.eml",
	}
	if pm.HTML != "" {
		vm.HTMLURL = base + "/message.html"
	}
	if _, ok := calendar(pm); ok {
		vm.ICSURL = base + "/calendar.ics"
	}
	for _, a := range pm.Attachments {
		vm.Attachments = append(vm.Attachments, a.Name+" ("+a.ContentType+")")
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("records.outbox.page_message", map[string]any{"Subject": pm.Subject}), views.OutboxMessage(vm))
}

// htmlPartPolicy lets the HTML part show its inline styles and nothing
// else: no scripts, no loads from anywhere, no forms, shown only inside
// the outbox page (whose iframe sandboxes it as well).
const htmlPartPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'; sandbox"

// OutboxHTML answers GET /staff/outbox/:id/message.html: the HTML part
// alone, for the message page's iframe. It is served on its own address
// because an iframe's srcdoc would take the staff pages' policy, which
// refuses the inline styles e-mails are written with.
func (s *Records) OutboxHTML(c echo.Context) error {
	_, pm, err := s.loadCopy(c)
	if err != nil {
		return err
	}
	if pm.HTML == "" {
		return apperr.NotFoundf("", "This message has no HTML part.")
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", htmlPartPolicy)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	return c.HTMLBlob(http.StatusOK, []byte(pm.HTML))
}

// OutboxEML answers GET /staff/outbox/:id/message.eml: the message as a
// mail program would receive it.
func (s *Records) OutboxEML(c echo.Context) error {
	cp, _, err := s.loadCopy(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="message-`+cp.MessageID.String()+`.eml"`)
	return c.Blob(http.StatusOK, "message/rfc822", cp.Raw)
}

// OutboxICS answers GET /staff/outbox/:id/calendar.ics: the message's
// calendar file.
func (s *Records) OutboxICS(c echo.Context) error {
	_, pm, err := s.loadCopy(c)
	if err != nil {
		return err
	}
	a, ok := calendar(pm)
	if !ok {
		return apperr.NotFoundf("", "This message has no calendar file.")
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="appointment.ics"`)
	return c.Blob(http.StatusOK, "text/calendar; charset=utf-8", a.Data)
}

// webLink finds the addresses in a text part; a sentence's last full stop
// or closing bracket is not part of one.
var webLink = regexp.MustCompile(`https?://[^\s<>"]+[^\s<>".,;:!?)\]]`)

// linkify cuts a text into its plain runs and its web addresses.
func linkify(text string) []views.TextRun {
	var out []views.TextRun
	at := 0
	for _, m := range webLink.FindAllStringIndex(text, -1) {
		if m[0] > at {
			out = append(out, views.TextRun{Text: text[at:m[0]]})
		}
		out = append(out, views.TextRun{Text: text[m[0]:m[1]], URL: text[m[0]:m[1]]})
		at = m[1]
	}
	if at < len(text) {
		out = append(out, views.TextRun{Text: text[at:]})
	}
	return out
}

// calendar is the message's calendar file.
func calendar(p mail.Parsed) (mail.Attachment, bool) {
	for _, a := range p.Attachments {
		if strings.HasPrefix(a.ContentType, "text/calendar") || strings.HasSuffix(strings.ToLower(a.Name), ".ics") {
			return a, true
		}
	}
	return mail.Attachment{}, false
}

// readable is an address as a person writes it: "Name <address>", or the
// address alone.
func readable(a netmail.Address) string {
	if a.Name == "" {
		return a.Address
	}
	return a.Name + " <" + a.Address + ">"
}
