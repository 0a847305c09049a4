// Package audit writes the audit trail: one row per state change, always in
// the transaction of the change it records, so a change without its row
// (or a row without its change) cannot be committed.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// Entry is one change: who did what to which entity, before and after.
type Entry struct {
	ClinicID uuid.UUID
	Actor    string // "patient", "staff:<email>", "system"
	Action   string // "booking.create", "hours.update", ...
	Entity   string
	EntityID string
	Before   any // nil when the entity did not exist
	After    any // nil when it no longer does
	Reason   string
}

// Write inserts the entry with q, which must be the change's transaction.
func Write(ctx context.Context, q *db.Queries, e Entry) error {
	row, err := Row(e)
	if err != nil {
		return err
	}
	if err := q.AuditInsert(ctx, row); err != nil {
		return fmt.Errorf("insert audit row: %w", err)
	}
	return nil
}

// Row is the entry as it is stored, for a statement that writes it along
// with its change (as the booking gate's single statement does).
func Row(e Entry) (db.AuditInsertParams, error) {
	if e.Actor == "" {
		e.Actor = "system"
	}
	before, err := encode(e.Before)
	if err != nil {
		return db.AuditInsertParams{}, err
	}
	after, err := encode(e.After)
	if err != nil {
		return db.AuditInsertParams{}, err
	}
	return db.AuditInsertParams{
		ClinicID: e.ClinicID, Actor: e.Actor, Action: e.Action, Entity: e.Entity, EntityID: e.EntityID,
		Before: before, After: after, Reason: e.Reason,
	}, nil
}

// encode is v as JSON; nil (also a typed nil pointer) is SQL NULL.
func encode(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil
	}
	return json.Marshal(v)
}
