package staff_test

// Tests of the staff accounts against the real PostgreSQL of testkit:
// signing in, passwords, sign-in links, accounts, roles (over the
// services of the calendar and the set-up as well) and the audit log's
// reads. Each test makes its own clinic, so they run in parallel. This
// file holds the helpers they share.

import (
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// testHashCost is the cost of new hashes in these tests: one more than the
// fixtures' (bcrypt's least), so a sign-in still has a weaker hash to
// rehash, without the seconds each hash at the production cost takes
// under -race.
const testHashCost = bcrypt.MinCost + 1

// newService is the staff service of these tests (see testHashCost).
func newService(pool *pgxpool.Pool, changed staff.Notifier) *staff.Service {
	return staff.New(pool, changed, quietLogger(), staff.WithHashCost(testHashCost))
}

// testPassword is every test account's password (testkit.PasswordHash is
// its hash, made once at bcrypt's lowest cost).
const testPassword = testkit.Password

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
