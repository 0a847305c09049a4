// Package mail builds the e-mails sent to patients (confirmations,
// reminders) and hands them to an SMTP server. A Sender's error says,
// through Permanent, whether a retry can help.
package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"regexp"
	"strings"

	gomail "github.com/wneessen/go-mail"
)

// Attachment is a file sent with a message, e.g. "appointment.ics" of
// type "text/calendar; method=PUBLISH; charset=utf-8".
type Attachment struct {
	Name, ContentType string // ContentType empty: guessed from Name's extension
	Data              []byte
}

// Message is one e-mail, already rendered.
type Message struct {
	// ID is the Message-ID's local part, stable per message (e.g. a UUID):
	// the header is "<ID@domain of From>", so the same message sent twice
	// has the same Message-ID and a receiver can drop the repeat.
	ID          string
	To          string // one address, "ana@example.org" or "Ana <ana@example.org>"
	Subject     string
	Text, HTML  string // sent as multipart/alternative; at least one of them
	Language    string // Content-Language, e.g. "en", "de"; may be empty
	Attachments []Attachment
	// From is the From address; empty: the Sender's MAIL_FROM. Preview,
	// which has no Sender, needs it.
	From string
}

// Sender sends one message; Permanent on its error says whether a retry
// can help.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrInvalidMessage is wrapped by every error about a message that can
// never be sent as it is (a bad address, no body, a bad ID): Permanent is
// true for it, since a retry would fail the same way.
var ErrInvalidMessage = errors.New("mail: invalid message")

// Preview is the message as it would be sent, in RFC 5322 form, built as
// Send builds it; m.From must be set. The Date and the MIME boundaries
// differ from one build to the next.
func Preview(m Message) ([]byte, error) {
	from, err := parseFrom("Message.From", m.From)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	return render(m, from)
}

func render(m Message, from *mail.Address) ([]byte, error) {
	msg, err := build(m, from)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := msg.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("mail: writing message %s: %w", m.ID, err)
	}
	return buf.Bytes(), nil
}

// parseFrom reads a From address (MAIL_FROM or Message.From); name says
// which, for the error. The address needs a domain: the Message-ID uses it.
func parseFrom(name, raw string) (*mail.Address, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("%s is empty: want an address such as Clinic <bookings@example.org>", name)
	}
	a, err := mail.ParseAddress(raw)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not an address such as Clinic <bookings@example.org>: %v", name, raw, err)
	}
	if _, err := domainOf(a.Address); err != nil {
		return nil, fmt.Errorf("%s %q: %v", name, raw, err)
	}
	return a, nil
}

// domainOf is the part of an address after its last @.
func domainOf(addr string) (string, error) {
	i := strings.LastIndexByte(addr, '@')
	if i < 0 || i == len(addr)-1 {
		return "", errors.New("the address has no domain")
	}
	return addr[i+1:], nil
}

var (
	// idPattern is what may stand left of the @ in a Message-ID (RFC 5322
	// dot-atom-text, without the rarer symbols).
	idPattern   = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+/=?^_{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_{|}~-]+)*$`)
	langPattern = regexp.MustCompile(`^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$`)
)

// build turns m into go-mail's message; every error wraps ErrInvalidMessage.
func build(m Message, from *mail.Address) (*gomail.Msg, error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrInvalidMessage, m.ID, fmt.Sprintf(format, args...))
	}
	if len(m.ID) == 0 || len(m.ID) > 200 || !idPattern.MatchString(m.ID) {
		return nil, invalid("ID %q is not usable in a Message-ID (letters, digits, dots and dashes)", m.ID)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		// The address is a patient's: the error does not repeat it.
		return nil, invalid("To is not one e-mail address")
	}
	if m.Text == "" && m.HTML == "" {
		return nil, invalid("neither a text nor an HTML body")
	}
	if m.Language != "" && !langPattern.MatchString(m.Language) {
		return nil, invalid("Language %q is not a language tag such as en or de-CH", m.Language)
	}
	domain, _ := domainOf(from.Address)

	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	msg.FromMailAddress(from)
	msg.ToMailAddress(to)
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageIDWithValue(m.ID + "@" + domain)
	// An automatic message: vacation responders should not answer it.
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	if m.Language != "" {
		msg.SetGenHeader(gomail.HeaderContentLang, m.Language)
	}
	setBody(msg, m.Text, m.HTML)
	for _, a := range m.Attachments {
		if err := attach(msg, a); err != nil {
			return nil, invalid("%v", err)
		}
	}
	return msg, nil
}

// setBody adds the text part, then the HTML one, which mail readers prefer
// when both are there.
func setBody(msg *gomail.Msg, text, html string) {
	switch {
	case text != "" && html != "":
		msg.SetBodyString(gomail.TypeTextPlain, text)
		msg.AddAlternativeString(gomail.TypeTextHTML, html)
	case text != "":
		msg.SetBodyString(gomail.TypeTextPlain, text)
	default:
		msg.SetBodyString(gomail.TypeTextHTML, html)
	}
}

func attach(msg *gomail.Msg, a Attachment) error {
	if strings.TrimSpace(a.Name) == "" {
		return errors.New("an attachment without a name")
	}
	var opts []gomail.FileOption
	if a.ContentType != "" {
		// The type is written into the part's header as it is: parse it
		// so that it cannot carry a line break or anything else.
		if _, _, err := mime.ParseMediaType(a.ContentType); err != nil || strings.ContainsAny(a.ContentType, "\r\n") {
			return fmt.Errorf("attachment %q: content type %q: not a media type", a.Name, a.ContentType)
		}
		opts = append(opts, gomail.WithFileContentType(gomail.ContentType(a.ContentType)))
	}
	msg.AttachReadSeeker(a.Name, bytes.NewReader(a.Data), opts...)
	return nil
}
