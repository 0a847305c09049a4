package mail

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
	"net/mail"
	"net/textproto"
	"strings"
)

// Parsed is an RFC 5322 message taken apart: what Preview writes and an
// SMTP server receives, read back.
type Parsed struct {
	Header mail.Header
	// From and To are the headers' one address each (the display name
	// decoded); zero when the header is absent.
	From, To  mail.Address
	Subject   string // encoded words decoded
	MessageID string // as in the header, with its angle brackets
	Language  string // Content-Language
	// Text and HTML are the text/plain and text/html bodies, decoded.
	Text, HTML string
	// Attachments are the files, decoded, in the message's order: each
	// with its (decoded) file name and its Content-Type header as written.
	Attachments []Attachment
}

// Attachment is the first attachment named name.
func (p Parsed) Attachment(name string) (Attachment, bool) {
	for _, a := range p.Attachments {
		if a.Name == name {
			return a, true
		}
	}
	return Attachment{}, false
}

// mimeDepth bounds the nesting of multipart bodies (a message of ours has
// two: mixed around alternative).
const mimeDepth = 8

// Parse reads a message: its headers, with encoded words decoded, and its
// MIME parts, with quoted-printable and base64 undone. It is strict, as
// the messages it reads are the ones this package builds: an error names
// what it cannot read faithfully (a header that is not one address, an
// unknown transfer encoding, text in a charset other than UTF-8, a body
// part that is neither the text, the HTML nor a file).
func Parse(raw []byte) (Parsed, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Parsed{}, fmt.Errorf("parse mail: %w", err)
	}
	p := Parsed{Header: m.Header, MessageID: m.Header.Get("Message-ID"), Language: m.Header.Get("Content-Language")}
	if p.Subject, err = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject")); err != nil {
		return Parsed{}, fmt.Errorf("parse mail: Subject: %w", err)
	}
	if p.From, err = oneAddress(m.Header, "From"); err != nil {
		return Parsed{}, err
	}
	if p.To, err = oneAddress(m.Header, "To"); err != nil {
		return Parsed{}, err
	}
	if err := p.walk(textproto.MIMEHeader(m.Header), m.Body, 0); err != nil {
		return Parsed{}, fmt.Errorf("parse mail: %w", err)
	}
	return p, nil
}

// oneAddress is the one address of the header name; zero when absent.
func oneAddress(h mail.Header, name string) (mail.Address, error) {
	if h.Get(name) == "" {
		return mail.Address{}, nil
	}
	list, err := h.AddressList(name)
	if err != nil {
		return mail.Address{}, fmt.Errorf("parse mail: %s: %w", name, err)
	}
	if len(list) != 1 {
		return mail.Address{}, fmt.Errorf("parse mail: %s has %d addresses, want one", name, len(list))
	}
	return *list[0], nil
}

// walk descends into multipart bodies and files each leaf as the text,
// the HTML or an attachment.
func (p *Parsed) walk(h textproto.MIMEHeader, body io.Reader, depth int) error {
	if depth > mimeDepth {
		return errors.New("multipart nested too deep")
	}
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mediaType, params = "text/plain", nil // RFC 2045's default, when the header is absent
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		return p.walkParts(mediaType, params["boundary"], body, depth)
	}
	data, err := decodeBody(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		return fmt.Errorf("%s part: %w", mediaType, err)
	}
	name, err := attachmentName(h, params)
	switch {
	case err != nil:
		return err
	case name != "":
		p.Attachments = append(p.Attachments, Attachment{Name: name, ContentType: h.Get("Content-Type"), Data: data})
		return nil
	}
	if cs := strings.ToLower(params["charset"]); strings.HasPrefix(mediaType, "text/") && cs != "" && cs != "utf-8" && cs != "us-ascii" {
		return fmt.Errorf("%s in charset %s, want utf-8", mediaType, cs)
	}
	switch {
	case mediaType == "text/plain" && p.Text == "":
		p.Text = string(data)
	case mediaType == "text/html" && p.HTML == "":
		p.HTML = string(data)
	default:
		return fmt.Errorf("a %s part that is neither the first of its kind nor a file", mediaType)
	}
	return nil
}

// walkParts reads the parts of a multipart body in turn.
func (p *Parsed) walkParts(mediaType, boundary string, body io.Reader, depth int) error {
	mr := multipart.NewReader(body, boundary)
	for {
		// Raw: the part's transfer encoding is undone here, whatever it is.
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", mediaType, err)
		}
		if err := p.walk(part.Header, part, depth+1); err != nil {
			return err
		}
	}
}

// attachmentName is the decoded file name of an attachment part; empty:
// the part is a body. A part is a file when its disposition says
// attachment or it carries a file name.
func attachmentName(h textproto.MIMEHeader, ctParams map[string]string) (string, error) {
	disp, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
	if err != nil {
		disp, params = "", nil
	}
	name := cmp.Or(params["filename"], ctParams["name"])
	if disp != "attachment" && name == "" {
		return "", nil
	}
	decoded, err := new(mime.WordDecoder).DecodeHeader(name)
	if err != nil {
		return "", fmt.Errorf("file name %q: %w", name, err)
	}
	if decoded == "" {
		return "", errors.New("an attachment without a file name")
	}
	return decoded, nil
}

// decodeBody undoes a part's Content-Transfer-Encoding.
func decodeBody(encoding string, body io.Reader) ([]byte, error) {
	switch e := strings.ToLower(strings.TrimSpace(encoding)); e {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body) // line breaks skipped
	case "", "7bit", "8bit", "binary":
	default:
		return nil, fmt.Errorf("unknown transfer encoding %q", e)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("%s body: %w", cmp.Or(encoding, "7bit"), err)
	}
	return data, nil
}
