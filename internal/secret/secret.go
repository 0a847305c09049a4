// Package secret is the server's signing key: the key of the HMACs that
// make the sign-in form's CSRF token and a browser's device cookie
// unforgeable, and from which the staff accounts' second factors derive
// the keys that seal their TOTP secrets and hash their recovery codes.
// Every instance must hold the same key, so a form served by one instance
// is accepted by another.
package secret

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
)

// MinLen is the shortest key accepted, in bytes.
const MinLen = 32

// name is the key's row in server_secrets.
const name = "signing"

// Check refuses a configured key (SECRET_KEY) that is too short to resist
// guessing.
func Check(key string) error {
	if len(key) < MinLen {
		return fmt.Errorf("want at least %d bytes, got %d", MinLen, len(key))
	}
	return nil
}

// Load returns configured when it is set; otherwise the key stored in
// PostgreSQL, which the first instance to start makes: each instance offers
// a random key (INSERT ... ON CONFLICT DO NOTHING) and then reads the one
// that was kept, so all of them agree without coordination.
func Load(ctx context.Context, pool *pgxpool.Pool, configured []byte) ([]byte, error) {
	if len(configured) > 0 {
		if err := Check(string(configured)); err != nil {
			return nil, err
		}
		return configured, nil
	}
	offer := make([]byte, 32)
	if _, err := rand.Read(offer); err != nil {
		return nil, err
	}
	q := db.New(pool)
	if err := q.ServerSecretInsert(ctx, db.ServerSecretInsertParams{Name: name, Value: offer}); err != nil {
		return nil, fmt.Errorf("store server secret: %w", err)
	}
	key, err := q.ServerSecretGet(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("read server secret: %w", err)
	}
	if len(key) < MinLen {
		return nil, errors.New("the stored server secret is too short")
	}
	return key, nil
}
