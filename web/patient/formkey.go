package patient

// The details form's idempotency key: a browser that sends the form again
// (a retry after a lost answer or a 503 at commit, a reload that re-posts,
// a double click) gets the confirmation of the booking it made the first
// time, not a cooldown refusal from its own booking or a second booking.

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/idempotency"
)

// formKeyField is the hidden field of the details form, named like the
// API's header.
const formKeyField = "Idempotency-Key"

// formKey is the key a held panel's form carries: the one the form was
// posted with, so that a panel shown again (a field error, the code step,
// a 503) keeps it and a second try repeats the first; a new one for a
// panel shown for the first time. A key is only good for the browser that
// posts it: the stored answer is filed under the browser's client id, and
// the request it fingerprints names the hold.
func formKey(c echo.Context) string {
	if k := c.FormValue(formKeyField); idempotency.Validate(k) == nil {
		return k
	}
	return uuid.NewString()
}

// formAnswer is what a booking made through the form stores with its key:
// where a retry is sent, the same confirmation page.
type formAnswer struct {
	BookingID   uuid.UUID `json:"bookingId"`
	ManageToken string    `json:"manageToken"`
}

// encodeFormAnswer renders the stored answer of a form's booking.
func encodeFormAnswer(conf booking.Confirmation) (int, []byte, error) {
	b, err := json.Marshal(formAnswer{BookingID: conf.Booking.ID, ManageToken: conf.ManageToken})
	return http.StatusSeeOther, b, err
}

// formRequestHash fingerprints what the form asked for: the same key sent
// with another hold or other details is refused, not answered with the
// booking made for the first.
func formRequestHash(p pageView, holdID string, d draft) []byte {
	return idempotency.HashRequest([]byte("form"), []byte(p.typeID.String()), []byte(holdID),
		[]byte(d.Name), []byte(d.Email), []byte(d.Phone))
}

// confirmed is the booking a confirm made, or the one a retry repeats.
func confirmed(res checkout.Confirmed) (formAnswer, error) {
	if res.Replay == nil {
		return formAnswer{BookingID: res.Confirmation.Booking.ID, ManageToken: res.Confirmation.ManageToken}, nil
	}
	var a formAnswer
	if err := json.Unmarshal(res.Replay.Body, &a); err != nil || a.ManageToken == "" {
		return formAnswer{}, fmt.Errorf("stored answer of the booking form: %v", err)
	}
	return a, nil
}
