package staff

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// AuditFilter narrows the audit log.
type AuditFilter struct {
	Entity, Actor string
	From, To      time.Time
	Page          int
}

// AuditPageSize is the rows per audit page.
const AuditPageSize = 50

// AuditEntry is one row of the audit log: who did what to which entity,
// with the entity as JSON before and after the change.
type AuditEntry struct {
	ID                              int64
	ClinicID                        uuid.UUID
	Actor, Action, Entity, EntityID string
	Before, After                   json.RawMessage
	Reason                          string
	At                              time.Time
}

func auditEntryFromRow(r db.AuditLog) AuditEntry {
	return AuditEntry{
		ID: r.ID, ClinicID: r.ClinicID, Actor: r.Actor, Action: r.Action, Entity: r.Entity, EntityID: r.EntityID,
		Before: r.Before, After: r.After, Reason: r.Reason, At: r.At,
	}
}

// Audit lists the clinic's audit rows, newest first: a page of
// AuditPageSize, and one more when there is a next page.
//
// Errors: FORBIDDEN.
func (s *Service) Audit(ctx context.Context, u User, f AuditFilter) ([]AuditEntry, error) {
	if err := u.May(ActAudit); err != nil {
		return nil, err
	}
	if f.Page < 1 {
		f.Page = 1
	}
	rows, err := db.New(s.pool).AuditList(ctx, db.AuditListParams{
		ClinicID: u.ClinicID, Entity: f.Entity, Actor: f.Actor, FromAt: f.From, ToAt: f.To,
		PageSize: AuditPageSize + 1, PageOffset: int32((f.Page - 1) * AuditPageSize),
	})
	return FromRows(rows, err, auditEntryFromRow)
}
