package web

import (
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/patient"
	"github.com/clinic/booking/web/waitpage"
)

// What the program's assembly (wire.go) takes from the handlers'
// packages: the assets, the session store, the server's key and the sizes
// of the limits the pages promise.

// Assets are the embedded static files.
type Assets = httpx.Assets

// NewAssets loads the embedded static files.
func NewAssets() *Assets { return httpx.NewAssets() }

func newSessions(pool *pgxpool.Pool, secure bool) *scs.SessionManager {
	return httpx.NewSessions(pool, secure)
}

func randomHex(n int) string { return httpx.RandomHex(n) }

const (
	findsPerAddress         = patient.FindsPerAddress
	findsPerEmail           = patient.FindsPerEmail
	waitlistJoinsPerAddress = waitpage.WaitlistJoinsPerAddress
	waitlistJoinsPerEmail   = waitpage.WaitlistJoinsPerEmail
	offerAnswersPerMinute   = waitpage.OfferAnswersPerMinute
)
