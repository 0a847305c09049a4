package privacy

// Session data: what the patient pages keep in a browser's session (the
// booking form's draft: "draft.name", "draft.email", "draft.phone", kept
// when a confirm fails so that a lost slot does not lose what was typed),
// and staff notices that name a patient ("Removed ... from the
// waitlist"). scs stores a session's values gob-encoded in the sessions
// table's data column, so only decoding them tells whose they are.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"

	"github.com/clinic/booking/internal/db"
)

// The session keys of the booking form's draft (web/patient).
const (
	draftName  = "draft.name"
	draftEmail = "draft.email"
	draftPhone = "draft.phone"
)

// noticeKeys are the only other session values that may name a patient:
// the one-time notices pages show after an action ("Removed Ann Example
// from the waitlist"), on the staff calendar, the staff waitlist, the
// patient's manage page and waitlist place. Nothing else a session keeps
// (the account's id, the CSRF token, the browser's id, the code step's
// account) is ever a patient's detail; matching a short name inside such a
// token would sign staff out of every clinic.
var noticeKeys = []string{"calNotice", "calError", "waitlistNotice", "notice", "placeNotice"}

// draftSession is one session whose values carry the patient.
type draftSession struct {
	token    string
	deadline time.Time
	values   map[string]any
	// draft: the booking form's draft is the patient's (the session is
	// deleted); otherwise only some values name them (those go).
	draft bool
}

// drafts are the sessions whose booking form draft is p's: its address
// or number has p's identity key.
func (s *Service) drafts(ctx context.Context, q *db.Queries, p Patient) ([]draftSession, error) {
	return s.sessionsCarrying(ctx, q, p, nil)
}

// sessionsCarrying are the sessions with p's draft, and those with any
// value that holds one of details.
func (s *Service) sessionsCarrying(ctx context.Context, q *db.Queries, p Patient, details []string) ([]draftSession, error) {
	rows, err := q.PrivacySessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	var out []draftSession
	for _, d := range decodeSessions(rows) {
		email, phone := stringValue(d.values, draftEmail), stringValue(d.values, draftPhone)
		if email != "" || phone != "" {
			ek, pk, err := PatientKeysOf(ctx, q, p.ClinicID, email, phone)
			if err != nil {
				return nil, err
			}
			d.draft = (p.EmailKey != "" && ek == p.EmailKey) || (p.PhoneKey != "" && pk == p.PhoneKey)
		}
		if d.draft || carries(d.values, details) {
			out = append(out, d)
		}
	}
	return out, nil
}

// eraseSessions deletes the sessions holding p's draft and takes the
// values that name p out of the others (a staff member stays signed in);
// it returns how many sessions it changed.
func eraseSessions(ctx context.Context, q *db.Queries, sessions []draftSession, details []string) (int, error) {
	var tokens []string
	cleaned := 0
	for _, d := range sessions {
		if d.draft {
			tokens = append(tokens, d.token)
			continue
		}
		for _, k := range noticeKeys {
			if str, ok := d.values[k].(string); ok && containsAny(str, details) {
				delete(d.values, k)
			}
		}
		data, err := scs.GobCodec{}.Encode(d.deadline, d.values)
		if err != nil {
			return 0, fmt.Errorf("encode session: %w", err)
		}
		if err := q.PrivacySessionSave(ctx, db.PrivacySessionSaveParams{Token: d.token, Data: data}); err != nil {
			return 0, fmt.Errorf("save session: %w", err)
		}
		cleaned++
	}
	if len(tokens) == 0 {
		return cleaned, nil
	}
	n, err := q.PrivacySessionsDelete(ctx, tokens)
	if err != nil {
		return 0, fmt.Errorf("delete sessions: %w", err)
	}
	return cleaned + int(n), nil
}

// Forget takes the values that name h's patient out of a session this
// request holds in memory (the admin's own, which the session manager
// writes back after the request): a draft, and notices naming them.
func Forget(ctx context.Context, sm *scs.SessionManager, h Holdings) {
	for _, k := range noticeKeys {
		if v, ok := sm.Get(ctx, k).(string); ok && containsAny(v, h.details) {
			sm.Remove(ctx, k)
		}
	}
}

// decodeSessions are the sessions' values; one this server did not
// write (it does not decode) is passed over.
func decodeSessions(rows []db.PrivacySessionsRow) []draftSession {
	out := make([]draftSession, 0, len(rows))
	for _, r := range rows {
		deadline, values, err := scs.GobCodec{}.Decode(r.Data)
		if err != nil {
			continue
		}
		out = append(out, draftSession{token: r.Token, deadline: deadline, values: values})
	}
	return out
}

func stringValue(values map[string]any, key string) string {
	v, _ := values[key].(string)
	return strings.TrimSpace(v)
}

// carries says whether a notice holds one of details.
func carries(values map[string]any, details []string) bool {
	for _, k := range noticeKeys {
		if str, ok := values[k].(string); ok && containsAny(str, details) {
			return true
		}
	}
	return false
}

// containsAny says whether s holds one of details, case aside. Only
// notices are searched, so a short name that matches by chance costs a
// notice, never a signed-in session.
func containsAny(s string, details []string) bool {
	for _, d := range details {
		if d != "" && strings.Contains(strings.ToLower(s), strings.ToLower(d)) {
			return true
		}
	}
	return false
}

// PatientKeysOf are the identity keys of an address and a number as the
// clinic's public path computes them (empty for an empty one).
func PatientKeysOf(ctx context.Context, q *db.Queries, clinicID uuid.UUID, email, phone string) (emailKey, phoneKey string, err error) {
	emailKey, phoneKey, err = booking.PatientKeys(ctx, q, clinicID, booking.Patient{Email: email, Phone: phone})
	if err != nil {
		return "", "", fmt.Errorf("patient keys: %w", err)
	}
	if strings.TrimSpace(email) == "" {
		emailKey = ""
	}
	return emailKey, phoneKey, nil
}
