package privacy

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/staff"
)

// Staff's actions on one patient's data (the role table's rows).
const (
	// ActPatients: find a patient and see what is held about them.
	ActPatients = staff.ActPatients
	// ActErase: erase a patient.
	ActErase = staff.ActErase
)

// Config is what New builds the service from.
type Config struct {
	Pool     *pgxpool.Pool
	Redis    redis.UniversalClient
	Bookings *booking.Service // the gate, whose cancel frees the patient's times
	Holds    *holds.Store     // the cooldowns the patient's bookings started
	Outbox   *outbox.Outbox   // the queue of the patient's e-mails and offers
	Ledger   *Ledger
	// Changed tells the clinic's open pages and caches that its bookings
	// changed (slots.SetupChanges.Changed): staff views drawn with the
	// patient's name draw them again.
	Changed staff.Notifier
	// LimitScope starts the names of the rate-limit counters, as the
	// server's (app.Options.LimitScope).
	LimitScope string
	Log        *slog.Logger
}

// Service finds and erases one patient's data.
type Service struct {
	cfg Config
}

// New makes the service.
func New(cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Changed == nil {
		cfg.Changed = func(context.Context, uuid.UUID) {}
	}
	return &Service{cfg: cfg}
}

// Ledger is the service's ledger of erasures.
func (s *Service) Ledger() *Ledger { return s.cfg.Ledger }

// Pool is the service's database.
func (s *Service) Pool() *pgxpool.Pool { return s.cfg.Pool }
