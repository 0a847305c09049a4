package privacy

// Replay: the ledger's erasures applied again, after a restore of the
// database from a backup that predates some of them.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// Replayed is what a replay did.
type Replayed struct {
	Entries  int // entries in the ledger's file
	Checked  int // entries looked for in the database
	Matched  int // entries that found something of their patient, erased again
	OtherKey int // entries made under another HMAC key: they match nothing
	Repaired int // entries of the database's table the file lacked, appended
	// RepairFailed says why the file could not be given them (the
	// replay goes on: the table keeps them).
	RepairFailed error
	Erased       Erased
}

// Replay applies the ledger's erasures again. With all, every entry of
// the file is looked for; without (at the server's start), only those the
// database's erasures table lacks, which are exactly the erasures made
// after the backup it was restored from: a start with nothing restored
// reads the file and the table and looks at no patient's row. Entries in
// the table that the file lacks (a lost or new file) are appended to it.
// Only rows made up to an entry's time are erased: a patient who came
// back afterwards keeps their new bookings.
func (s *Service) Replay(ctx context.Context, all bool) (Replayed, error) {
	var r Replayed
	file, err := s.cfg.Ledger.Entries()
	if err != nil {
		return r, err
	}
	r.Entries = len(file)
	rows, err := db.New(s.cfg.Pool).ErasureList(ctx)
	if err != nil {
		return r, fmt.Errorf("read erasures: %w", err)
	}
	inFile := make(map[uuid.UUID]bool, len(file))
	for _, e := range file {
		inFile[e.ID] = true
	}
	inTable := make(map[uuid.UUID]bool, len(rows))
	for _, row := range rows {
		inTable[row.ID] = true
		if !inFile[row.ID] && s.cfg.Ledger.Path() != "" && r.RepairFailed == nil {
			if r.RepairFailed = s.cfg.Ledger.append(entryFromRow(row)); r.RepairFailed == nil {
				r.Repaired++
			}
		}
	}
	var pending []Entry
	for _, e := range file {
		if !all && inTable[e.ID] {
			continue
		}
		r.Checked++
		if e.KeyID != s.cfg.Ledger.keyID {
			r.OtherKey++
			continue
		}
		pending = append(pending, e)
	}
	if len(pending) == 0 {
		return r, nil
	}
	keys, err := s.erasedKeys(ctx, pending)
	if err != nil {
		return r, err
	}
	for _, e := range pending {
		p := Patient{ClinicID: e.ClinicID, EmailKey: keys[e.EmailMAC], PhoneKey: keys[e.PhoneMAC]}
		if p.EmailKey == "" && p.PhoneKey == "" {
			if err := record(ctx, db.New(s.cfg.Pool), e); err != nil {
				return r, err
			}
			continue
		}
		n, err := s.erase(ctx, "system", p, &e)
		if err != nil {
			return r, err
		}
		if !n.Zero() {
			r.Matched++
		}
		r.Erased.add(n)
	}
	return r, nil
}

// erasedKeys are the identity keys still held whose HMAC is one of the
// entries', by HMAC: one query per clinic over its bookings, places and
// messages made up to its latest entry (the HMAC computed in PostgreSQL
// from the key's pads), and one read of the sessions' drafts.
func (s *Service) erasedKeys(ctx context.Context, pending []Entry) (map[string]string, error) {
	q := db.New(s.cfg.Pool)
	type clinicMACs struct {
		macs  []string
		until time.Time
	}
	byClinic := map[uuid.UUID]*clinicMACs{}
	wanted := map[string]bool{}
	for _, e := range pending {
		c := byClinic[e.ClinicID]
		if c == nil {
			c = &clinicMACs{}
			byClinic[e.ClinicID] = c
		}
		for _, m := range []string{e.EmailMAC, e.PhoneMAC} {
			if m != "" {
				c.macs = append(c.macs, m)
				wanted[m] = true
			}
		}
		if e.At.After(c.until) {
			c.until = e.At
		}
	}
	keys := map[string]string{}
	ipad, opad := s.cfg.Ledger.pads()
	for clinicID, c := range byClinic {
		rows, err := q.PrivacyKeysByMAC(ctx, db.PrivacyKeysByMACParams{Ipad: ipad, Opad: opad, Macs: c.macs, ClinicID: clinicID, Until: c.until})
		if err != nil {
			return nil, fmt.Errorf("find erased keys: %w", err)
		}
		for _, k := range rows {
			keys[s.cfg.Ledger.mac(k.Key)] = k.Key
		}
	}
	sessions, err := q.PrivacySessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	for _, d := range decodeSessions(sessions) {
		email, phone := stringValue(d.values, draftEmail), stringValue(d.values, draftPhone)
		for clinicID := range byClinic {
			if email == "" && phone == "" {
				break
			}
			ek, pk, err := PatientKeysOf(ctx, q, clinicID, email, phone)
			if err != nil {
				return nil, err
			}
			for _, k := range []string{ek, pk} {
				if m := s.cfg.Ledger.mac(k); k != "" && wanted[m] {
					keys[m] = k
				}
			}
		}
	}
	return keys, nil
}

func (e *Erased) add(o Erased) {
	e.Bookings += o.Bookings
	e.Cancelled += o.Cancelled
	e.Messages += o.Messages
	e.Jobs += o.Jobs
	e.Places += o.Places
	e.Links += o.Links
	e.Answers += o.Answers
	e.Audit += o.Audit
	e.Sessions += o.Sessions
	e.RedisKeys += o.RedisKeys
}
