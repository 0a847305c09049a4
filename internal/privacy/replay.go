package privacy

// Replay: the ledger's erasures applied again, after a restore of the
// database from a backup that predates some of them.

import (
	"context"
	"fmt"

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
	Erased   Erased
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
		if !inFile[row.ID] && s.cfg.Ledger.Path() != "" {
			if err := s.cfg.Ledger.append(entryFromRow(row)); err != nil {
				return r, err
			}
			r.Repaired++
		}
	}
	for _, e := range file {
		if !all && inTable[e.ID] {
			continue
		}
		r.Checked++
		if e.KeyID != s.cfg.Ledger.keyID {
			r.OtherKey++
			continue
		}
		n, matched, err := s.replayOne(ctx, e)
		if err != nil {
			return r, err
		}
		if matched {
			r.Matched++
		}
		r.Erased.add(n)
	}
	return r, nil
}

// replayOne erases again what e's patient has left in the database, and
// records e in the table.
func (s *Service) replayOne(ctx context.Context, e Entry) (Erased, bool, error) {
	q := db.New(s.cfg.Pool)
	if _, err := q.ClinicGet(ctx, e.ClinicID); err != nil {
		return Erased{}, false, nil // the clinic is gone, and its patients with it
	}
	p, err := s.patientOf(ctx, q, e)
	if err != nil {
		return Erased{}, false, err
	}
	if p.EmailKey == "" && p.PhoneKey == "" {
		return Erased{}, false, record(ctx, q, e)
	}
	n, err := s.erase(ctx, "system", p, &e)
	return n, err == nil, err
}

// patientOf is e's patient as the database names them: the identity keys
// whose HMAC is e's, among the rows made up to e's time and the sessions'
// drafts. A key nothing holds any more stays empty.
func (s *Service) patientOf(ctx context.Context, q *db.Queries, e Entry) (Patient, error) {
	p := Patient{ClinicID: e.ClinicID}
	ipad, opad := s.cfg.Ledger.pads()
	var macs []string
	for _, m := range []string{e.EmailMAC, e.PhoneMAC} {
		if m != "" {
			macs = append(macs, m)
		}
	}
	keys, err := q.PrivacyKeysByMAC(ctx, db.PrivacyKeysByMACParams{Ipad: ipad, Opad: opad, Macs: macs, ClinicID: e.ClinicID, Until: e.At})
	if err != nil {
		return p, fmt.Errorf("find erased keys: %w", err)
	}
	for _, k := range keys {
		s.matchKey(&p, e, k.Kind, k.Key)
	}
	sessions, err := q.PrivacySessions(ctx)
	if err != nil {
		return p, fmt.Errorf("read sessions: %w", err)
	}
	for _, d := range decodeSessions(sessions) {
		email, phone := stringValue(d.values, draftEmail), stringValue(d.values, draftPhone)
		if email == "" && phone == "" {
			continue
		}
		ek, pk, err := PatientKeysOf(ctx, q, e.ClinicID, email, phone)
		if err != nil {
			return p, err
		}
		s.matchKey(&p, e, "email", ek)
		s.matchKey(&p, e, "phone", pk)
	}
	return p, nil
}

// matchKey sets p's key of kind to key when key's HMAC is e's.
func (s *Service) matchKey(p *Patient, e Entry, kind, key string) {
	if key == "" {
		return
	}
	switch mac := s.cfg.Ledger.mac(key); {
	case kind == "email" && mac == e.EmailMAC:
		p.EmailKey = key
	case kind == "phone" && mac == e.PhoneMAC:
		p.PhoneKey = key
	}
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
