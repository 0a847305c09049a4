// Package idempotency makes a retried request with the same Idempotency-Key
// return the original answer and create nothing new.
// Records live 24 hours.
package idempotency

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
)

// Key identifies one logical request: who, which route, which key, and a
// hash of what was asked.
type Key struct {
	ClinicID    uuid.UUID
	Principal   string // the client or staff member; keys are per principal
	Route       string
	Key         string
	RequestHash []byte
}

// Record is a stored answer.
type Record struct {
	Status int
	Body   []byte
}

// HashRequest is the request fingerprint stored with a key.
func HashRequest(parts ...[]byte) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// Validate checks the header's value: 1 to 200 printable characters.
//
// Errors: INVALID_ARGUMENT naming Idempotency-Key.
func Validate(key string) error {
	if len(key) == 0 || len(key) > 200 {
		return apperr.Invalidf("Idempotency-Key", "The Idempotency-Key header must be 1 to 200 characters.")
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e {
			return apperr.Invalidf("Idempotency-Key", "The Idempotency-Key header must be printable ASCII without spaces.")
		}
	}
	return nil
}

// ErrMismatch is the same key sent with a different request.
func ErrMismatch() *apperr.Error {
	return apperr.New(apperr.Unprocessable, apperr.CodeIdempotencyMismatch,
		"This Idempotency-Key was already used for a different request.")
}

// Find returns the stored answer for k, or nil. A record for a different
// request is ErrMismatch.
func Find(ctx context.Context, q db.DBTX, k Key) (*Record, error) {
	row, err := db.New(q).IdempotencyGet(ctx, db.IdempotencyGetParams{
		ClinicID: k.ClinicID, Principal: k.Principal, Route: k.Route, Key: k.Key,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find idempotency record: %w", err)
	}
	if string(row.RequestHash) != string(k.RequestHash) {
		return nil, ErrMismatch()
	}
	return &Record{Status: int(row.StatusCode), Body: row.Body}, nil
}

// ReplayError is a request that repeats one already answered: Record is
// that answer, to be sent again, and nothing new was created.
type ReplayError struct{ Record *Record }

func (e *ReplayError) Error() string { return "idempotent replay" }

// Save stores the answer, in the same transaction as the change it
// answers. A concurrent request with the same key that committed first
// makes the insert wait for it and then store nothing: Save then returns
// that request's record (or ErrMismatch), and the caller rolls back and
// answers with it. No lock is taken before: a first attempt pays one
// statement for its idempotency.
func Save(ctx context.Context, tx pgx.Tx, k Key, r Record) (*Record, error) {
	n, err := db.New(tx).IdempotencyInsert(ctx, db.IdempotencyInsertParams{
		ClinicID: k.ClinicID, Principal: k.Principal, Route: k.Route, Key: k.Key,
		RequestHash: k.RequestHash, StatusCode: int32(r.Status), Body: r.Body,
	})
	if err != nil {
		return nil, fmt.Errorf("save idempotency record: %w", err)
	}
	if n == 0 {
		rec, err := Find(ctx, tx, k)
		if err == nil && rec == nil {
			err = errors.New("idempotency record neither saved nor found")
		}
		return rec, err
	}
	return nil, nil
}

// Cleaner removes expired records.
type Cleaner struct{ q db.DBTX }

// NewCleaner cleans the records of the database behind q (a pool).
func NewCleaner(q db.DBTX) *Cleaner { return &Cleaner{q: q} }

// DeleteExpired removes the records older than a day and says how many it
// removed.
//
// Errors: none of its own (database failures are internal).
func (c *Cleaner) DeleteExpired(ctx context.Context) (int64, error) {
	return db.New(c.q).IdempotencyDeleteExpired(ctx)
}
