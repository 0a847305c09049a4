package testkit

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"testing"
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

// ParseReceived parses r's raw message with net/mail and mime/multipart,
// decoding encoded words, quoted-printable and base64; it fails the test on
// a malformed message.
func ParseReceived(t testing.TB, r Received) ParsedMail {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(r.Data))
	if err != nil {
		t.Fatalf("parse received mail: %v", err)
	}
	p := ParsedMail{
		Header:          m.Header,
		MessageID:       m.Header.Get("Message-ID"),
		Language:        m.Header.Get("Content-Language"),
		Attachments:     map[string][]byte{},
		AttachmentTypes: map[string]string{},
	}
	dec := new(mime.WordDecoder)
	if p.Subject, err = dec.DecodeHeader(m.Header.Get("Subject")); err != nil {
		t.Fatalf("parse received mail: Subject: %v", err)
	}
	p.From = address(t, m.Header, "From")
	p.To = address(t, m.Header, "To")
	p.walk(t, textproto.MIMEHeader(m.Header), m.Body)
	return p
}

func address(t testing.TB, h mail.Header, name string) string {
	t.Helper()
	if h.Get(name) == "" {
		return ""
	}
	a, err := h.AddressList(name)
	if err != nil || len(a) != 1 {
		t.Fatalf("parse received mail: %s %q: %v (%d addresses)", name, h.Get(name), err, len(a))
	}
	return a[0].Address
}

// walk descends into multipart bodies and files each leaf as the text,
// the HTML or an attachment.
func (p *ParsedMail) walk(t testing.TB, h textproto.MIMEHeader, body io.Reader) {
	t.Helper()
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mediaType = "text/plain" // RFC 2045's default, when the header is absent
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextRawPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("parse received mail: %s: %v", mediaType, err)
			}
			p.walk(t, part.Header, part)
		}
	}
	data := decodeBody(t, h.Get("Content-Transfer-Encoding"), body)
	if cs := strings.ToLower(params["charset"]); strings.HasPrefix(mediaType, "text/") && cs != "" && cs != "utf-8" && cs != "us-ascii" {
		t.Fatalf("parse received mail: %s in charset %s, want utf-8", mediaType, cs)
	}
	if name := attachmentName(t, h, params); name != "" {
		p.Attachments[name] = data
		p.AttachmentTypes[name] = h.Get("Content-Type")
		return
	}
	switch mediaType {
	case "text/plain":
		p.Text += string(data)
	case "text/html":
		p.HTML += string(data)
	default:
		t.Fatalf("parse received mail: a %s part that is no attachment", mediaType)
	}
}

// attachmentName is the decoded file name of an attachment part; empty:
// the part is a body.
func attachmentName(t testing.TB, h textproto.MIMEHeader, ctParams map[string]string) string {
	t.Helper()
	disp, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
	if err != nil || (disp != "attachment" && params["filename"] == "") {
		return ""
	}
	name := params["filename"]
	if name == "" {
		name = ctParams["name"]
	}
	decoded, err := new(mime.WordDecoder).DecodeHeader(name)
	if err != nil {
		t.Fatalf("parse received mail: file name %q: %v", name, err)
	}
	return decoded
}

func decodeBody(t testing.TB, encoding string, body io.Reader) []byte {
	t.Helper()
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "", "7bit", "8bit", "binary":
	default:
		t.Fatalf("parse received mail: unknown transfer encoding %q", encoding)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("parse received mail: %s body: %v", encoding, err)
	}
	return data
}
