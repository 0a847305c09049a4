package testkit

import (
	"net/mail"
	"testing"

	clinicmail "github.com/clinic/booking/internal/mail"
)

// ParsedMail is a received message taken apart.
type ParsedMail struct {
	Header    mail.Header
	From, To  string // the header's addresses, without display names
	Subject   string // decoded
	MessageID string // as in the header, with the angle brackets
	Language  string // Content-Language
	Text      string // the text/plain body, decoded
	HTML      string // the text/html body, decoded
	// Attachments are the decoded files by file name, AttachmentTypes
	// their Content-Type headers.
	Attachments     map[string][]byte
	AttachmentTypes map[string]string
}

// ParseReceived parses r's raw message with the application's own parser
// (mail.Parse), decoding encoded words, quoted-printable and base64; it
// fails the test on a message that parser refuses.
func ParseReceived(t testing.TB, r Received) ParsedMail {
	t.Helper()
	m, err := clinicmail.Parse(r.Data)
	if err != nil {
		t.Fatalf("parse received mail: %v", err)
	}
	p := ParsedMail{
		Header: m.Header, From: m.From.Address, To: m.To.Address, Subject: m.Subject,
		MessageID: m.MessageID, Language: m.Language, Text: m.Text, HTML: m.HTML,
		Attachments:     map[string][]byte{},
		AttachmentTypes: map[string]string{},
	}
	for _, a := range m.Attachments {
		if _, dup := p.Attachments[a.Name]; dup {
			t.Fatalf("parse received mail: two attachments named %q", a.Name)
		}
		p.Attachments[a.Name] = a.Data
		p.AttachmentTypes[a.Name] = a.ContentType
	}
	return p
}
