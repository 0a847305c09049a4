package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// mailBombRow: hold, book with the victim's address and cancel with the
// manage link, over and over, from ten addresses; then count what reached
// the victim's mailbox.
func mailBombRow(ctx context.Context, base string, ac abuseClinic, mb *mailbox) abuseRow {
	// An address of this run: the cap counts a recipient's mail for a day,
	// across runs on one database.
	victim := "bombed@" + ac.slug + ".example.net"
	var steps tally
	for i := range 30 {
		a := newAbuser(base, 10+i%10)
		client := uuid.NewString()
		hold, ans := a.hold(ctx, ac.open, uuid.Nil, slotAt(200+i), client)
		if hold == "" {
			steps.add(ans)
			continue
		}
		id, token, ans := a.book(ctx, ac.open, hold, client, map[string]string{"name": "Bombed Person", "email": victim})
		steps.add(ans)
		if id != "" {
			steps.add(a.do(ctx, http.MethodDelete, "/v1/appointments/"+id, nil, map[string]string{"Authorization": "Bearer " + token}))
		}
	}
	got := mb.settle(victim, 20*time.Second)
	return abuseRow{"e-mail bombing: book the victim's address and cancel, 30 cycles from 10 addresses",
		fmt.Sprintf("%d e-mails to the victim (%s)", got, steps.String()), "≤ 6"}
}

// reclaimRow: the attacker releases its hold and claims the same time
// again at once, twenty times; a competitor on another address tries
// right after each re-claim.
func reclaimRow(ctx context.Context, base string, ac abuseClinic) abuseRow {
	attacker, rival := newAbuser(base, 30), newAbuser(base, 31)
	client, rivalClient := uuid.NewString(), uuid.NewString()
	sp, start := ac.specialists[0], slotAt(300)
	hold, ans := attacker.hold(ctx, ac.open, sp, start, client)
	if hold == "" {
		return abuseRow{"hold renewed by release and re-claim", "first hold refused: " + fmt.Sprint(ans.status, " ", ans.code), "0"}
	}
	kept, rivalWon := 0, 0
	var refusals tally
	for range 20 {
		attacker.do(ctx, http.MethodDelete, "/v1/holds/"+hold+"?clientId="+client, nil, nil)
		again, ans := attacker.hold(ctx, ac.open, sp, start, client)
		if again != "" {
			kept++
			hold = again
		} else {
			refusals.add(ans)
		}
		if h, _ := rival.hold(ctx, ac.open, sp, start, rivalClient); h != "" {
			rivalWon++
			break
		}
	}
	return abuseRow{"hold renewed by release and re-claim (20 cycles)",
		fmt.Sprintf("%d re-claims by the attacker, rival won %d time(s); re-claims refused: %s", kept, rivalWon, refusals.String()),
		"0 re-claims; the rival wins"}
}

// spellingsRow books the type with a day's cooldown as one patient, then
// as the same patient spelled otherwise, each from an address of its own.
func spellingsRow(ctx context.Context, base string, ac abuseClinic) abuseRow {
	const phone = "+49 30 5550100"
	first := newAbuser(base, 40)
	client := uuid.NewString()
	hold, _ := first.hold(ctx, ac.cooling, uuid.Nil, slotAt(400), client)
	if _, _, ans := first.book(ctx, ac.cooling, hold, client, map[string]string{"name": "Vic Tim", "email": "victim.name@gmail.com", "phone": phone}); ans.status != 201 {
		return abuseRow{"cooldown bypass spellings", fmt.Sprintf("first booking refused: %d %s", ans.status, ans.code), "every spelling caught"}
	}
	spellings := []struct{ email, phone string }{
		{"victim.name+2@gmail.com", ""}, {"victimname@gmail.com", ""}, {"victim.name@googlemail.com", ""},
		{"Victim.Name@GMAIL.com", ""}, {"victim.nam\uff45@gmail.com", ""}, {"victim.name@gmail.c\u043em", ""},
		{"victim.na\u200bme@gmail.com", ""}, {"victim.name\u200e@gmail.com", ""}, {"victim.name\u200f@gmail.com", ""},
		{"victim.name\u061c@gmail.com", ""}, {"\ufeffvictim.name@gmail.com", ""}, {"victim\u3164.name@gmail.com", ""},
		{"victim.name\U000e0041@gmail.com", ""},
		{"other.one@example.org", "0049 30 5550100"}, {"other.two@example.org", "030 5550100"}, {"other.three@example.org", "+49 (30) 555-0100"},
	}
	caught := 0
	var missed []string
	var seen tally
	for i, s := range spellings {
		a := newAbuser(base, 41+i)
		client := uuid.NewString()
		hold, ans := a.hold(ctx, ac.cooling, uuid.Nil, slotAt(401+i), client)
		if hold != "" {
			_, _, ans = a.book(ctx, ac.cooling, hold, client, map[string]string{"name": "Vic Tim", "email": s.email, "phone": s.phone})
		}
		seen.add(ans)
		if ans.status == 400 || ans.code == "COOLDOWN" {
			caught++
		} else {
			missed = append(missed, fmt.Sprintf("%+q/%q → %d %s", s.email, s.phone, ans.status, ans.code))
		}
	}
	return abuseRow{"cooldown bypass spellings (" + fmt.Sprint(len(spellings)) + ")",
		fmt.Sprintf("%d caught (%s); missed: %s", caught, seen.String(), strings.Join(missed, "; ")), "every spelling caught"}
}

// namesRow books with names that carry links and looks for them in the
// e-mails the clinic sent.
func namesRow(ctx context.Context, base string, ac abuseClinic, mb *mailbox) abuseRow {
	names := []string{`<a href="https://evil.example/pay">Pay here</a>`, "Pay now at evil.com", "www.evil.example", "See https://evil.example", "Call 0900 123456"}
	var seen tally
	for i, name := range names {
		a := newAbuser(base, 60+i)
		client := uuid.NewString()
		hold, ans := a.hold(ctx, ac.open, uuid.Nil, slotAt(500+i), client)
		if hold != "" {
			_, _, ans = a.book(ctx, ac.open, hold, client, map[string]string{"name": name, "email": fmt.Sprintf("named%d@example.org", i)})
		}
		seen.add(ans)
	}
	time.Sleep(3 * time.Second)
	return abuseRow{"names carrying links (" + fmt.Sprint(len(names)) + ")",
		fmt.Sprintf("%s; e-mails naming evil.example or evil.com: %d", seen.String(), mb.containing("evil.")), "400 each; 0 e-mails"}
}

// streamsRow opens a thousand event streams from one address.
func streamsRow(ctx context.Context, base string, ac abuseClinic) abuseRow {
	a := newAbuser(base, 70)
	a.client.Timeout = 0
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var seen tally
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := 0
	for range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/holds/stream?appointmentTypeId="+ac.open.String()+"&clientId="+uuid.NewString(), nil)
			res, err := a.client.Do(req)
			if err != nil {
				seen.add(answer{code: "transport"})
				return
			}
			seen.add(answer{status: res.StatusCode})
			if res.StatusCode == 200 {
				mu.Lock()
				open++
				mu.Unlock()
				_, _ = bufio.NewReader(res.Body).ReadString('\n') // the stream answered
			}
			go func() { <-ctx.Done(); res.Body.Close() }()
		}()
	}
	wg.Wait()
	return abuseRow{"1,000 event streams from one address", fmt.Sprintf("%d open (%s)", open, seen.String()), "≤ 50"}
}

// utf8Row sends a booking whose name holds bytes that are not UTF-8.
func utf8Row(ctx context.Context, base string, ac abuseClinic) abuseRow {
	a := newAbuser(base, 80)
	client := uuid.NewString()
	hold, _ := a.hold(ctx, ac.open, uuid.Nil, slotAt(600), client)
	body := []byte(`{"holdId":"` + hold + `","clientId":"` + client + `","patient":{"name":"A` + "\xff\xfe" + `B","email":"utf8@example.org"}}`)
	ans := a.do(ctx, http.MethodPost, "/v1/appointment-types/"+ac.open.String()+"/book", body, map[string]string{"Idempotency-Key": uuid.NewString()})
	return abuseRow{"invalid UTF-8 inside a JSON body", fmt.Sprintf("%d %s", ans.status, ans.code), "400"}
}

// metricsRow asks the public address for /metrics.
func metricsRow(ctx context.Context, base string) abuseRow {
	ans := newAbuser(base, 81).do(ctx, http.MethodGet, "/metrics", nil, nil)
	return abuseRow{"/metrics on the public address", fmt.Sprint(ans.status), "404"}
}
