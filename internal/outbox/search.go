package outbox

// The outbox page's search: the kept messages by recipient, kind and
// booking, a page at a time.

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// CopyQuery is what the outbox page searches for; empty fields match
// every message. Page counts from 1.
type CopyQuery struct {
	Recipient string
	Kind      string
	BookingID uuid.UUID
	Page      int
}

// CopyPage is how many kept messages a page lists.
const CopyPage = 50

// FoundCopy is a kept message the search found, with its kind and the
// booking it tells of (uuid.Nil: none).
type FoundCopy struct {
	Copy
	Kind      string
	BookingID uuid.UUID
}

// SearchCopies is one page of the kept messages of u's clinic that match
// q, newest first, and whether another page follows.
//
// Errors: FORBIDDEN.
func (o *Outbox) SearchCopies(ctx context.Context, u staff.User, q CopyQuery) ([]FoundCopy, bool, error) {
	if err := u.May(ActCopies); err != nil {
		return nil, false, err
	}
	page := max(q.Page, 1)
	p := db.OutboxCopySearchParams{
		ClinicID: u.ClinicID, Recipient: likeEscape(strings.TrimSpace(q.Recipient)), Kind: q.Kind,
		BookingID: uuid.NullUUID{UUID: q.BookingID, Valid: q.BookingID != uuid.Nil},
		SkipRows:  int32(min(page-1, 10000) * CopyPage), MaxRows: CopyPage + 1,
	}
	rows, err := db.New(o.pool).OutboxCopySearch(ctx, p)
	if err != nil {
		return nil, false, fmt.Errorf("search outbox: %w", err)
	}
	more := len(rows) > CopyPage
	rows = rows[:min(len(rows), CopyPage)]
	out := make([]FoundCopy, len(rows))
	for i, r := range rows {
		out[i] = FoundCopy{Copy: Copy{MessageID: r.MessageID, Recipient: r.Recipient, Subject: r.Subject, Created: r.CreatedAt}, Kind: r.Kind, BookingID: r.BookingID.UUID}
	}
	return out, more, nil
}

// likeEscape makes s match only itself in a LIKE pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
