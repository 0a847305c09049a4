package mail_test

import (
	"bytes"
	"errors"
	"net/mail"
	"strings"
	"testing"
	"time"

	clinicmail "github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/testkit"
)

const (
	mailFrom  = "Praxis Müller <bookings@example.org>"
	patientTo = "Jörg Bäcker <joerg.baecker@example.net>"
	subjectDE = "Terminbestätigung für Dienstag, 14. März – Zahnärztliche Untersuchung"
	icsType   = "text/calendar; method=PUBLISH; charset=utf-8"
)

var icsData = []byte("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:PUBLISH\r\nBEGIN:VEVENT\r\nSUMMARY:Untersuchung\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")

// confirmation is a German confirmation with both bodies and a calendar file.
func confirmation(id string) clinicmail.Message {
	return clinicmail.Message{
		ID:       id,
		To:       patientTo,
		Subject:  subjectDE,
		Text:     "Guten Tag Herr Bäcker,\nIhr Termin ist bestätigt: Dienstag, 14. März, 09:30.\nBis bald!\n",
		HTML:     "<p>Guten Tag Herr B&auml;cker,</p><p>Ihr Termin ist <b>bestätigt</b>: Dienstag, 14. März, 09:30.</p>",
		Language: "de",
		Attachments: []clinicmail.Attachment{
			{Name: "appointment.ics", ContentType: icsType, Data: icsData},
			{Name: "logo.png", Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 255}},
		},
	}
}

// checkConfirmation fails the test unless p is confirmation(id) as sent
// from mailFrom.
func checkConfirmation(t *testing.T, p testkit.ParsedMail, id string) {
	t.Helper()
	want := confirmation(id)
	if p.Subject != subjectDE {
		t.Errorf("Subject %q, want %q", p.Subject, subjectDE)
	}
	if raw := p.Header.Get("Subject"); !isASCII(raw) {
		t.Errorf("the Subject header is not encoded for transport: %q", raw)
	}
	if p.MessageID != "<"+id+"@example.org>" {
		t.Errorf("Message-ID %q, want <%s@example.org>", p.MessageID, id)
	}
	if p.From != "bookings@example.org" || p.To != "joerg.baecker@example.net" {
		t.Errorf("From %q To %q", p.From, p.To)
	}
	if from, _ := p.Header.AddressList("From"); len(from) != 1 || from[0].Name != "Praxis Müller" {
		t.Errorf("From header %q does not decode to the name Praxis Müller", p.Header.Get("From"))
	}
	if p.Language != "de" {
		t.Errorf("Content-Language %q", p.Language)
	}
	if d, err := p.Header.Date(); err != nil || time.Since(d).Abs() > time.Hour {
		t.Errorf("Date %q: %v", p.Header.Get("Date"), err)
	}
	if p.Header.Get("Auto-Submitted") != "auto-generated" {
		t.Errorf("Auto-Submitted %q", p.Header.Get("Auto-Submitted"))
	}
	// Quoted-printable carries line breaks as CRLF.
	if wantText := strings.ReplaceAll(want.Text, "\n", "\r\n"); p.Text != wantText {
		t.Errorf("text part %q, want %q", p.Text, wantText)
	}
	if p.HTML != want.HTML {
		t.Errorf("HTML part %q, want %q", p.HTML, want.HTML)
	}
	if !bytes.Equal(p.Attachments["appointment.ics"], icsData) {
		t.Errorf("appointment.ics %q, want %q", p.Attachments["appointment.ics"], icsData)
	}
	if ct := p.AttachmentTypes["appointment.ics"]; !strings.HasPrefix(ct, icsType) {
		t.Errorf("appointment.ics type %q, want %s", ct, icsType)
	}
	if !bytes.Equal(p.Attachments["logo.png"], want.Attachments[1].Data) || !strings.HasPrefix(p.AttachmentTypes["logo.png"], "image/png") {
		t.Errorf("logo.png %q of type %q", p.Attachments["logo.png"], p.AttachmentTypes["logo.png"])
	}
	if len(p.Attachments) != 2 {
		t.Errorf("attachments %v, want 2", len(p.Attachments))
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func TestMailPreview(t *testing.T) {
	m := confirmation("3f0c6a0e-5b7e-4a53-9d61-0c7d1e2f9a10")
	m.From = mailFrom
	raw, err := clinicmail.Preview(m)
	if err != nil {
		t.Fatal(err)
	}
	p := testkit.ParseReceived(t, testkit.Received{Data: raw})
	checkConfirmation(t, p, m.ID)

	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if ct := msg.Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/mixed") {
		t.Errorf("top Content-Type %q, want multipart/mixed around the alternative", ct)
	}
	if !bytes.Contains(raw, []byte("multipart/alternative")) {
		t.Errorf("no multipart/alternative part:\n%s", raw)
	}
	for _, line := range strings.Split(string(raw), "\r\n") {
		if len(line) > 998 {
			t.Fatalf("a line of %d bytes", len(line))
		}
	}
}

func TestMailPreviewShapes(t *testing.T) {
	base := clinicmail.Message{ID: "m1", To: "ana@example.net", Subject: "Reminder", From: "bookings@example.org"}

	textOnly := base
	textOnly.Text = "See you tomorrow."
	raw, err := clinicmail.Preview(textOnly)
	if err != nil {
		t.Fatal(err)
	}
	p := testkit.ParseReceived(t, testkit.Received{Data: raw})
	if p.Text != "See you tomorrow." || p.HTML != "" || p.Language != "" || p.Header.Get("Content-Language") != "" {
		t.Errorf("text only: text %q html %q language %q", p.Text, p.HTML, p.Language)
	}
	if ct := p.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("text only: Content-Type %q", ct)
	}

	// A subject cannot smuggle in a header.
	injected := textOnly
	injected.Subject = "Hi\r\nBcc: evil@example.com"
	raw, err = clinicmail.Preview(injected)
	if err != nil {
		t.Fatal(err)
	}
	p = testkit.ParseReceived(t, testkit.Received{Data: raw})
	if p.Header.Get("Bcc") != "" || p.Subject != "Hi\r\nBcc: evil@example.com" {
		t.Errorf("subject with a line break: Bcc %q, subject %q", p.Header.Get("Bcc"), p.Subject)
	}

	// The same message previewed twice keeps its Message-ID.
	again, err := clinicmail.Preview(textOnly)
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.ParseReceived(t, testkit.Received{Data: again}).MessageID; got != "<m1@example.org>" {
		t.Errorf("Message-ID %q", got)
	}
}

func TestMailInvalidMessageIsPermanent(t *testing.T) {
	good := clinicmail.Message{ID: "m1", To: "ana.patient@example.net", Subject: "s", Text: "t", From: "bookings@example.org"}
	cases := map[string]func(m *clinicmail.Message){
		"no ID":             func(m *clinicmail.Message) { m.ID = "" },
		"ID with a space":   func(m *clinicmail.Message) { m.ID = "a b" },
		"ID with an @":      func(m *clinicmail.Message) { m.ID = "a@b" },
		"ID with a bracket": func(m *clinicmail.Message) { m.ID = "a>" },
		"bad To":            func(m *clinicmail.Message) { m.To = "ana.patient at example.net" },
		"two To":            func(m *clinicmail.Message) { m.To = "ana.patient@example.net, b@example.net" },
		"no body":           func(m *clinicmail.Message) { m.Text = "" },
		"bad language":      func(m *clinicmail.Message) { m.Language = "de\r\nBcc: x" },
		"unnamed file":      func(m *clinicmail.Message) { m.Attachments = []clinicmail.Attachment{{Data: []byte("x")}} },
		"bad content type": func(m *clinicmail.Message) {
			m.Attachments = []clinicmail.Attachment{{Name: "a", ContentType: "text/plain\r\nBcc: x"}}
		},
		"bad From": func(m *clinicmail.Message) { m.From = "nobody" },
		"no From":  func(m *clinicmail.Message) { m.From = "" },
	}
	for name, change := range cases {
		m := good
		change(&m)
		_, err := clinicmail.Preview(m)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, clinicmail.ErrInvalidMessage) || !clinicmail.Permanent(err) {
			t.Errorf("%s: %v is not a permanent invalid-message error", name, err)
		}
		if strings.Contains(err.Error(), "ana.patient") {
			t.Errorf("%s: the error shows the patient's address: %v", name, err)
		}
	}
	if _, err := clinicmail.Preview(good); err != nil {
		t.Fatalf("the good message: %v", err)
	}
}
