package mail_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	clinicmail "github.com/clinic/booking/internal/mail"
)

// What Preview builds, Parse reads back: the UTF-8 subject and names, both
// bodies, the files in order with their types.
func TestParseReadsWhatPreviewBuilds(t *testing.T) {
	m := confirmation("5d1f2b7c-8e4a-4c3b-a1d0-9f6e5c4b3a21")
	m.From = mailFrom
	raw, err := clinicmail.Preview(m)
	if err != nil {
		t.Fatal(err)
	}
	p, err := clinicmail.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != subjectDE || p.Header.Get("Subject") == subjectDE {
		t.Errorf("Subject %q (header %q), want %q decoded from encoded words", p.Subject, p.Header.Get("Subject"), subjectDE)
	}
	if p.From.Name != "Praxis Müller" || p.From.Address != "bookings@example.org" {
		t.Errorf("From %+v", p.From)
	}
	if p.To.Name != "Jörg Bäcker" || p.To.Address != "joerg.baecker@example.net" {
		t.Errorf("To %+v", p.To)
	}
	if p.MessageID != "<"+m.ID+"@example.org>" || p.Language != "de" {
		t.Errorf("Message-ID %q, language %q", p.MessageID, p.Language)
	}
	if want := strings.ReplaceAll(m.Text, "\n", "\r\n"); p.Text != want {
		t.Errorf("text %q, want %q", p.Text, want)
	}
	if p.HTML != m.HTML {
		t.Errorf("HTML %q, want %q", p.HTML, m.HTML)
	}
	if len(p.Attachments) != 2 || p.Attachments[0].Name != "appointment.ics" || p.Attachments[1].Name != "logo.png" {
		t.Fatalf("attachments %+v, want appointment.ics then logo.png", p.Attachments)
	}
	ics, ok := p.Attachment("appointment.ics")
	if !ok || !bytes.Equal(ics.Data, icsData) || !strings.HasPrefix(ics.ContentType, icsType) {
		t.Errorf("appointment.ics: %q of type %q", ics.Data, ics.ContentType)
	}
	if logo, _ := p.Attachment("logo.png"); !bytes.Equal(logo.Data, m.Attachments[1].Data) || !strings.HasPrefix(logo.ContentType, "image/png") {
		t.Errorf("logo.png: %q of type %q", logo.Data, logo.ContentType)
	}
	if _, ok := p.Attachment("other.pdf"); ok {
		t.Error("a file that is not there was found")
	}
}

// A message of one text part has that text and nothing else.
func TestParseSinglePart(t *testing.T) {
	raw, err := clinicmail.Preview(clinicmail.Message{ID: "p1", To: "ana@example.net", Subject: "Reminder", Text: "See you.", From: "bookings@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := clinicmail.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != "See you." || p.HTML != "" || len(p.Attachments) != 0 || p.To.Name != "" || p.To.Address != "ana@example.net" {
		t.Errorf("single part: %+v", p)
	}
}

// rawMail is a message with the given headers (CRLF-joined) and body.
func rawMail(headers []string, body ...string) []byte {
	return []byte(strings.Join(append(append(headers, ""), body...), "\r\n"))
}

// What Parse cannot read faithfully it refuses, saying what.
func TestParseRefusesWhatItCannotRead(t *testing.T) {
	nested := []string{"--B0"}
	for i := 1; i <= 10; i++ {
		b := "B" + strconv.Itoa(i)
		nested = append(nested, "Content-Type: multipart/mixed; boundary="+b, "", "--"+b)
	}
	cases := map[string]struct {
		raw  []byte
		want string
	}{
		"no header block": {[]byte("not a message"), "parse mail"},
		"two To":          {rawMail([]string{"To: a@example.net, b@example.net"}, "x"), "To has 2 addresses"},
		"bad From":        {rawMail([]string{"From: nobody at all"}, "x"), "From"},
		"unknown encoding": {rawMail([]string{"Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: x-uuencode"}, "x"),
			`unknown transfer encoding "x-uuencode"`},
		"latin-1 text": {rawMail([]string{"Content-Type: text/plain; charset=iso-8859-1"}, "x"), "charset iso-8859-1"},
		"broken base64": {rawMail([]string{"Content-Type: text/plain", "Content-Transfer-Encoding: base64"}, "!!!not base64"),
			"base64 body"},
		"unnamed file": {rawMail([]string{"Content-Type: multipart/mixed; boundary=X"}, "--X",
			"Content-Type: application/pdf", "Content-Disposition: attachment", "", "%PDF", "--X--"), "without a file name"},
		"inline image": {rawMail([]string{"Content-Type: multipart/mixed; boundary=X"}, "--X",
			"Content-Type: image/png", "", "png", "--X--"), "image/png part"},
		"second text": {rawMail([]string{"Content-Type: multipart/mixed; boundary=X"}, "--X", "", "one", "--X", "", "two", "--X--"),
			"text/plain part"},
		"nested too deep": {rawMail([]string{"Content-Type: multipart/mixed; boundary=B0"}, nested...), "nested too deep"},
	}
	for name, c := range cases {
		_, err := clinicmail.Parse(c.raw)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}
