package privacy

// The ledger of erasures: which identities of a clinic were erased and
// when, as keyed hashes only, kept twice: appended to a file apart from
// the database (ERASURE_LEDGER), and in the erasures table. The file is
// what survives a restore of the database from a backup taken before an
// erasure; the table says which of its entries this database has had
// applied, so that a start after such a restore finds the missing ones
// without looking at any patient's row (see Replay).
//
// The HMAC key is derived from the server's signing key (SECRET_KEY, or
// the key the first instance stored in server_secrets): the stored key is
// part of every backup taken after the first start, so a restore keeps
// it. A database restored from before its first start, or a SECRET_KEY
// changed since, has another key: the ledger's entries then match
// nothing, and Replay says so (each entry names its key by keyID).

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// Entry is one erasure as the ledger keeps it: nothing in it is readable.
type Entry struct {
	ID       uuid.UUID `json:"id"`
	ClinicID uuid.UUID `json:"clinic"`
	// EmailMAC and PhoneMAC are the hex HMAC-SHA256 of the identity keys
	// erased; empty when the patient was named without one.
	EmailMAC string    `json:"email,omitempty"`
	PhoneMAC string    `json:"phone,omitempty"`
	KeyID    string    `json:"key"`
	At       time.Time `json:"at"`
}

// Ledger appends erasures to its file and reads them back.
type Ledger struct {
	path  string
	key   []byte
	keyID string
	mu    sync.Mutex
}

// NewLedger is the ledger in the file at path ("" keeps the table only,
// which does not survive a restore), with the HMAC key derived from the
// server's signing key.
func NewLedger(path string, serverKey []byte) *Ledger {
	m := hmac.New(sha256.New, serverKey)
	m.Write([]byte("erasure-ledger"))
	key := m.Sum(nil)
	id := sha256.Sum256(append([]byte("erasure-ledger-key-id\x00"), key...))
	return &Ledger{path: path, key: key, keyID: hex.EncodeToString(id[:8])}
}

// Path is the ledger's file ("": none).
func (l *Ledger) Path() string { return l.path }

// mac is the hex HMAC of one identity key ("" for none).
func (l *Ledger) mac(identityKey string) string {
	if identityKey == "" {
		return ""
	}
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte(identityKey))
	return hex.EncodeToString(m.Sum(nil))
}

// pads are the key's inner and outer HMAC pads, for PostgreSQL to compute
// the same HMAC (PrivacyKeysByMAC).
func (l *Ledger) pads() (ipad, opad []byte) {
	ipad, opad = make([]byte, sha256.BlockSize), make([]byte, sha256.BlockSize)
	copy(ipad, l.key)
	copy(opad, l.key)
	for i := range ipad {
		ipad[i] ^= 0x36
		opad[i] ^= 0x5c
	}
	return ipad, opad
}

// entryFor is the ledger's entry of p erased at at.
func (l *Ledger) entryFor(p Patient, at time.Time) Entry {
	return Entry{ID: uuid.New(), ClinicID: p.ClinicID, EmailMAC: l.mac(p.EmailKey), PhoneMAC: l.mac(p.PhoneKey), KeyID: l.keyID, At: at.UTC()}
}

// append writes e to the file and waits for the disk to have it: one
// line, under an exclusive lock of the file (the server and the command
// line may write at once).
func (l *Ledger) append(e Entry) error {
	if l.path == "" {
		return nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, statErr := os.Stat(l.path)
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("erasure ledger: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("erasure ledger: lock: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("erasure ledger: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("erasure ledger: sync: %w", err)
	}
	if errors.Is(statErr, os.ErrNotExist) {
		// A new file is only durable once its directory entry is.
		if d, err := os.Open(filepath.Dir(l.path)); err == nil {
			_ = d.Sync()
			_ = d.Close()
		}
	}
	return nil
}

// Entries are every entry of the file, oldest first; none when it does
// not exist yet. A line cut short by a crash mid-write is skipped.
func (l *Ledger) Entries() ([]Entry, error) {
	if l.path == "" {
		return nil, nil
	}
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("erasure ledger: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.ID == uuid.Nil {
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("erasure ledger: %w", err)
	}
	return out, nil
}

// record keeps e in the database's table too, in the erasure's
// transaction.
func record(ctx context.Context, q *db.Queries, e Entry) error {
	if err := q.ErasureInsert(ctx, db.ErasureInsertParams{
		ID: e.ID, ClinicID: e.ClinicID, EmailMac: e.EmailMAC, PhoneMac: e.PhoneMAC, KeyID: e.KeyID, ErasedAt: e.At,
	}); err != nil {
		return fmt.Errorf("record erasure: %w", err)
	}
	return nil
}

func entryFromRow(r db.Erasure) Entry {
	return Entry{ID: r.ID, ClinicID: r.ClinicID, EmailMAC: r.EmailMac, PhoneMAC: r.PhoneMac, KeyID: r.KeyID, At: r.ErasedAt.UTC()}
}
