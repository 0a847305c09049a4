package mail

import (
	"errors"
	"net/mail"
	"regexp"
	"strings"

	gomail "github.com/wneessen/go-mail"
)

// Permanent reports whether err means the message can never go out as it
// is: the server answered MAIL FROM, RCPT TO, DATA or the end of the data
// with a 5xx reply, or the message itself is invalid (ErrInvalidMessage).
// Anything else (a 4xx reply, a refused or broken connection, a timeout, a
// TLS or AUTH failure, a 5xx to EHLO or STARTTLS) is temporary: retry later.
// So is 530 "authentication required": the sender's settings lack a login,
// which fixing them cures for every message waiting.
func Permanent(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrInvalidMessage) {
		return true
	}
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Reason {
	case gomail.ErrSMTPMailFrom, gomail.ErrSMTPRcptTo, gomail.ErrSMTPData, gomail.ErrSMTPDataClose:
		code := se.ErrorCode()
		return !se.IsTemp() && code/100 == 5 && code != 530
	}
	return false
}

// redactedError is an error whose text no longer shows the recipient; the
// cause stays reachable for errors.As (Permanent needs it).
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redact replaces the recipient's address and display name in text, in any
// letter case (servers often lower-case the address they repeat).
func redact(text, to string) string {
	a, err := mail.ParseAddress(to)
	if err != nil {
		return text
	}
	for _, s := range []string{a.Address, a.Name} {
		// A name of a letter or two would blank out half the text.
		if len(strings.TrimSpace(s)) >= 3 {
			text = regexp.MustCompile(`(?i)`+regexp.QuoteMeta(s)).ReplaceAllString(text, "[recipient]")
		}
	}
	return text
}
