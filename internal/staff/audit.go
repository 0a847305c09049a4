package staff

import (
	"context"
	"time"

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

// Audit lists the clinic's audit rows, newest first.
func (s *Service) Audit(ctx context.Context, u User, f AuditFilter) ([]db.AuditLog, error) {
	if f.Page < 1 {
		f.Page = 1
	}
	return db.New(s.pool).AuditList(ctx, db.AuditListParams{
		ClinicID: u.ClinicID, Entity: f.Entity, Actor: f.Actor, FromAt: f.From, ToAt: f.To,
		PageSize: AuditPageSize + 1, PageOffset: int32((f.Page - 1) * AuditPageSize),
	})
}
