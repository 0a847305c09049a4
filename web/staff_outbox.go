// The development outbox: without a mail server configured, the e-mails
// patients would get are kept, and staff read them here (the list, one
// message with its text and HTML parts, the raw message and its calendar
// file). With a mail server the list stays empty and says so.

package web

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
)

// outboxAction is what reading the outbox asks of the role table: the
// messages show what the booking search shows (patients' names, addresses
// and appointments), and the desk is who answers "I got no e-mail".
const outboxAction = staff.ActSearch

// outboxNav shows the Outbox link in the staff header while messages are
// kept rather than sent, to those who may read them.
func (s *Server) outboxNav(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.deps.Outbox.Stored() && staffUser(c).May(outboxAction) == nil {
			c.SetRequest(c.Request().WithContext(views.WithOutboxLink(c.Request().Context())))
		}
		return next(c)
	}
}

// outboxPage answers GET /staff/outbox: the clinic's kept messages, newest
// first.
func (s *Server) outboxPage(c echo.Context) error {
	u := staffUser(c)
	if err := u.May(outboxAction); err != nil {
		return err
	}
	ctx := c.Request().Context()
	vm := views.OutboxVM{Nav: s.nav(c, "outbox"), Stored: s.deps.Outbox.Stored()}
	if vm.Stored {
		loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
		if err != nil {
			return err
		}
		copies, err := s.deps.Outbox.Copies(ctx, u.ClinicID)
		if err != nil {
			return err
		}
		for _, cp := range copies {
			vm.Rows = append(vm.Rows, views.OutboxRowVM{
				When: cp.Created.In(loc).Format(staffTimeLayout), Recipient: cp.Recipient, Subject: cp.Subject,
				URL: outboxPath(cp.MessageID),
			})
		}
	}
	return s.page(c, http.StatusOK, "Outbox", views.Outbox(vm))
}

func outboxPath(id uuid.UUID) string { return "/staff/outbox/" + id.String() }

// loadCopy is the kept message the path names, of the viewer's clinic,
// taken apart.
func (s *Server) loadCopy(c echo.Context) (outbox.Copy, parsedMail, error) {
	u := staffUser(c)
	if err := u.May(outboxAction); err != nil {
		return outbox.Copy{}, parsedMail{}, err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return outbox.Copy{}, parsedMail{}, apperr.NotFoundf("id", "No such message.")
	}
	cp, err := s.deps.Outbox.CopyOf(c.Request().Context(), u.ClinicID, id)
	if err != nil {
		return outbox.Copy{}, parsedMail{}, err
	}
	pm, err := parseMail(cp.Raw)
	if err != nil {
		return outbox.Copy{}, parsedMail{}, err
	}
	return cp, pm, nil
}

// outboxMessage answers GET /staff/outbox/:id: one message.
func (s *Server) outboxMessage(c echo.Context) error {
	cp, pm, err := s.loadCopy(c)
	if err != nil {
		return err
	}
	loc, err := s.deps.Slots.Zone(c.Request().Context(), staffUser(c).ClinicID)
	if err != nil {
		return err
	}
	base := outboxPath(cp.MessageID)
	vm := views.OutboxMessageVM{
		Nav: s.nav(c, "outbox"), Subject: pm.Subject, From: pm.From, To: pm.To,
		When: cp.Created.In(loc).Format(staffTimeLayout), Text: linkify(pm.Text), EMLURL: base + "/message.eml",
	}
	if pm.HTML != "" {
		vm.HTMLURL = base + "/message.html"
	}
	if _, ok := pm.calendar(); ok {
		vm.ICSURL = base + "/calendar.ics"
	}
	for _, a := range pm.Attachments {
		vm.Attachments = append(vm.Attachments, a.Name+" ("+a.ContentType+")")
	}
	return s.page(c, http.StatusOK, "Outbox: "+pm.Subject, views.OutboxMessage(vm))
}

// htmlPartPolicy lets the HTML part show its inline styles and nothing
// else: no scripts, no loads from anywhere, no forms, shown only inside
// the outbox page (whose iframe sandboxes it as well).
const htmlPartPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'; sandbox"

// outboxHTML answers GET /staff/outbox/:id/message.html: the HTML part
// alone, for the message page's iframe. It is served on its own address
// because an iframe's srcdoc would take the staff pages' policy, which
// refuses the inline styles e-mails are written with.
func (s *Server) outboxHTML(c echo.Context) error {
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

// outboxEML answers GET /staff/outbox/:id/message.eml: the message as a
// mail program would receive it.
func (s *Server) outboxEML(c echo.Context) error {
	cp, _, err := s.loadCopy(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="message-`+cp.MessageID.String()+`.eml"`)
	return c.Blob(http.StatusOK, "message/rfc822", cp.Raw)
}

// outboxICS answers GET /staff/outbox/:id/calendar.ics: the message's
// calendar file.
func (s *Server) outboxICS(c echo.Context) error {
	_, pm, err := s.loadCopy(c)
	if err != nil {
		return err
	}
	a, ok := pm.calendar()
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
func (p parsedMail) calendar() (mailPart, bool) {
	for _, a := range p.Attachments {
		if strings.HasPrefix(a.ContentType, "text/calendar") || strings.HasSuffix(strings.ToLower(a.Name), ".ics") {
			return a, true
		}
	}
	return mailPart{}, false
}

// parsedMail is a kept message taken apart for its page.
type parsedMail struct {
	Subject, From, To string
	Text, HTML        string // the first text/plain and text/html parts
	Attachments       []mailPart
}

// mailPart is an attachment, decoded.
type mailPart struct {
	Name, ContentType string
	Data              []byte
}

// mimeDepth bounds the nesting of multipart bodies (a message of ours has
// two: mixed around alternative).
const mimeDepth = 8

// parseMail reads an RFC 5322 message: its headers (encoded words
// decoded) and its MIME parts (quoted-printable and base64 decoded).
func parseMail(raw []byte) (parsedMail, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return parsedMail{}, fmt.Errorf("read kept message: %w", err)
	}
	dec := new(mime.WordDecoder)
	header := func(name string) string {
		v := m.Header.Get(name)
		if d, err := dec.DecodeHeader(v); err == nil {
			return d
		}
		return v
	}
	p := parsedMail{Subject: header("Subject"), From: readable(header("From")), To: readable(header("To"))}
	if err := p.walk(textproto.MIMEHeader(m.Header), m.Body, 0); err != nil {
		return parsedMail{}, fmt.Errorf("read kept message: %w", err)
	}
	return p, nil
}

// readable is an address header as a person writes it: "Name <address>",
// or the address alone.
func readable(v string) string {
	a, err := mail.ParseAddress(v)
	switch {
	case err != nil:
		return v
	case a.Name == "":
		return a.Address
	}
	return a.Name + " <" + a.Address + ">"
}

// walk reads one part: a multipart's parts in turn, else its content.
func (p *parsedMail) walk(h textproto.MIMEHeader, body io.Reader, depth int) error {
	if depth > mimeDepth {
		return errors.New("multipart nested too deep")
	}
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mediaType, params = "text/plain", nil // RFC 2045's default
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart() // decodes quoted-printable itself
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := p.walk(part.Header, part, depth+1); err != nil {
				return err
			}
		}
	}
	data, err := io.ReadAll(decodeTransfer(h.Get("Content-Transfer-Encoding"), body))
	if err != nil {
		return fmt.Errorf("decode %s part: %w", mediaType, err)
	}
	disposition, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := cmp.Or(dparams["filename"], params["name"])
	switch {
	case disposition != "attachment" && mediaType == "text/plain" && p.Text == "":
		p.Text = string(data)
	case disposition != "attachment" && mediaType == "text/html" && p.HTML == "":
		p.HTML = string(data)
	default:
		p.Attachments = append(p.Attachments, mailPart{Name: name, ContentType: h.Get("Content-Type"), Data: data})
	}
	return nil
}

// decodeTransfer undoes a part's Content-Transfer-Encoding.
func decodeTransfer(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r) // line breaks skipped
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}
