package verify

// The e-mailed codes: sent at once, guessed at most MaxTries times.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"math/big"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/mail"
)

func (s *Service) codeKey(email string) string {
	return "verify:" + s.cfg.Scope + "code:" + addressID(email)
}

// codeMAC is what is stored of a code: an HMAC with the server's key, so
// that a copy of Redis does not give the code away in a million guesses.
func (s *Service) codeMAC(email, code string) string {
	m := hmac.New(sha256.New, s.cfg.Key)
	m.Write([]byte("verify-code\x00" + identity.EmailKey(email) + "\x00" + code))
	return hex.EncodeToString(m.Sum(nil))
}

// liveCode answers the live code's remaining life in ms, or 0 when none
// with guesses left exists.
//
//	KEYS[1] the code  ARGV[1] MaxTries
var liveCode = redis.NewScript(`
if tonumber(redis.call('HGET', KEYS[1], 'tries') or ARGV[1]) >= tonumber(ARGV[1]) then
  return 0
end
return math.max(redis.call('PTTL', KEYS[1]), 0)
`)

// storeCode stores a new code unless a live one with guesses left exists.
//
//	KEYS[1] the code  ARGV[1] its MAC  ARGV[2] life (ms)  ARGV[3] MaxTries
//
// Replies 1 when stored, else the live one's remaining life (negative ms).
var storeCode = redis.NewScript(`
if tonumber(redis.call('HGET', KEYS[1], 'tries') or ARGV[3]) < tonumber(ARGV[3]) then
  return -math.max(redis.call('PTTL', KEYS[1]), 1)
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'mac', ARGV[1], 'tries', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// dropCode deletes the code with the MAC ARGV[1] (a code that could not
// be sent), and nothing else.
var dropCode = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'mac') == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 0
`)

// redeem checks one guess.
//
//	KEYS[1] the code  ARGV[1] the guess's MAC  ARGV[2] MaxTries
//
// Replies {'ok'}, {'wrong', tries left} or {'gone'}; the last wrong guess
// leaves the code dead, a right one deletes it.
var redeem = redis.NewScript(`
local mac = redis.call('HGET', KEYS[1], 'mac')
local max = tonumber(ARGV[2])
if not mac then
  return {'gone', 0}
end
local tries = tonumber(redis.call('HGET', KEYS[1], 'tries') or '0')
if tries >= max then
  return {'gone', 0}
end
if mac == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return {'ok', 0}
end
tries = redis.call('HINCRBY', KEYS[1], 'tries', 1)
return {'wrong', max - tries}
`)

// SendCode makes sure the patient has a live code for email, good for at
// most life (and CodeLife): an existing one with guesses left stands (no
// second e-mail), otherwise a new one is e-mailed at once in lang. It
// returns when the code lapses.
//
// Errors: VERIFICATION_CODE_QUOTA (429: the address was sent its allowance
// of codes this hour), UNAVAILABLE (503: Redis or the mail server failed).
func (s *Service) SendCode(ctx context.Context, email, address, lang string, life time.Duration) (time.Time, error) {
	life = min(life, CodeLife).Truncate(time.Millisecond)
	if life <= 0 {
		life = time.Second
	}
	key := s.codeKey(email)
	left, err := liveCode.Run(ctx, s.rdb, []string{key}, MaxTries).Int64()
	if err != nil {
		return time.Time{}, codeUnavailable(err)
	}
	if left > 0 {
		return s.now().Add(time.Duration(left) * time.Millisecond), nil
	}
	if err := byAddress(ctx, s.cfg.CodesByAddress, address, apperr.CodeVerificationCodeQuota,
		"Too many codes were e-mailed at the request of your network in the last hour. Please try again later, or call the clinic."); err != nil {
		s.Count(StepCodeQuota)
		return time.Time{}, err
	}
	res, ok, wait, err := s.cfg.Codes.Reserve(ctx, addressID(email))
	switch {
	case err != nil:
		return time.Time{}, codeUnavailable(err)
	case !ok:
		s.Count(StepCodeQuota)
		return time.Time{}, &apperr.Error{
			Kind: apperr.TooMany, Code: apperr.CodeVerificationCodeQuota, RetryAfter: wait,
			Message: "This e-mail address was sent as many codes as it may be in an hour. Please try again later.",
			Details: map[string]any{"retryAfterSeconds": apperr.Seconds(wait)},
		}
	}
	code, err := newCode()
	if err != nil {
		_ = s.cfg.Codes.GiveBack(context.WithoutCancel(ctx), res)
		return time.Time{}, codeUnavailable(err)
	}
	mac := s.codeMAC(email, code)
	stored, err := storeCode.Run(ctx, s.rdb, []string{key}, mac, life.Milliseconds(), MaxTries).Int64()
	if err != nil || stored != 1 {
		// Another request sent a code a moment ago: that one stands.
		_ = s.cfg.Codes.GiveBack(context.WithoutCancel(ctx), res)
		if err != nil {
			return time.Time{}, codeUnavailable(err)
		}
		return s.now().Add(time.Duration(-stored) * time.Millisecond), nil
	}
	until := s.now().Add(life)
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
	defer cancel()
	if err := s.cfg.Sender.Send(sendCtx, codeMessage(email, code, lang, life)); err != nil {
		_ = dropCode.Run(context.WithoutCancel(ctx), s.rdb, []string{key}, mac).Err()
		_ = s.cfg.Codes.GiveBack(context.WithoutCancel(ctx), res)
		return time.Time{}, codeUnavailable(fmt.Errorf("send code: %s", addresses.ReplaceAllString(err.Error(), "<address>")))
	}
	s.Count(StepCodeSent)
	return until, nil
}

// addresses finds e-mail addresses in a mail server's answer, which the
// logs must not keep.
var addresses = regexp.MustCompile(`[^\s<>"'(),;:]+@[^\s<>"'(),;:]+`)

func codeUnavailable(err error) *apperr.Error {
	return &apperr.Error{Kind: apperr.Unavailable, Code: apperr.CodeUnavailable,
		Message: "The code could not be sent just now. Please try again in a moment.", Err: err}
}

// newCode is six random digits.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("random code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// codeMessage is the e-mail that carries the code: nothing in it comes
// from what a stranger typed but the address it goes to.
func codeMessage(email, code, lang string, life time.Duration) mail.Message {
	tr := i18n.For(lang)
	data := map[string]any{"Code": code, "Minutes": max(int(life/time.Minute), 1)}
	text := tr.T("verify.mail.text", data)
	return mail.Message{
		ID: uuid.NewString(), To: email, Language: tr.Lang(),
		Subject: tr.T("verify.mail.subject", nil),
		Text:    text,
		HTML:    "<p>" + html.EscapeString(text) + "</p>",
	}
}

// Redeem checks a code the patient typed for email and, when it is right,
// returns a token that verifies the address for TokenLife.
//
// Errors: INVALID_ARGUMENT naming email or code (not a six-digit code),
// VERIFICATION_CODE_WRONG (400, with triesLeft), VERIFICATION_CODE_GONE
// (410: no live code, it lapsed, or its guesses are spent), UNAVAILABLE.
func (s *Service) Redeem(ctx context.Context, email, code, address string) (string, error) {
	if identity.EmailKey(email) == "" {
		return "", apperr.Invalidf("email", "email is required.")
	}
	if !sixDigits(code) {
		return "", apperr.Invalidf("code", "code is the six digits of the e-mail we sent.")
	}
	if err := byAddress(ctx, s.cfg.GuessesByAddress, address, apperr.CodeRateLimited,
		"Too many codes were typed from your network in the last hour. Please try again later."); err != nil {
		return "", err
	}
	res, err := redeem.Run(ctx, s.rdb, []string{s.codeKey(email)}, s.codeMAC(email, code), MaxTries).Slice()
	if err != nil {
		return "", codeUnavailable(err)
	}
	switch status, _ := res[0].(string); status {
	case "ok":
		s.Count(StepVerified)
		return s.Token(email), nil
	case "wrong":
		s.Count(StepCodeWrong)
		left, _ := res[1].(int64)
		return "", WrongCode(int(left))
	default:
		s.Count(StepCodeGone)
		return "", apperr.New(apperr.Gone, apperr.CodeVerificationCodeGone,
			"This code is no longer valid (it lapsed, or was guessed wrong too often). Book again to be sent a new one.")
	}
}

// WrongCode is a wrong guess, with how many are left.
func WrongCode(left int) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.Invalid, Code: apperr.CodeVerificationCodeWrong,
		Message: fmt.Sprintf("That code is not the one we sent. %d tries left.", left),
		Details: map[string]any{"field": "code", "triesLeft": left},
	}
}

func sixDigits(s string) bool {
	if len(s) != 6 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
