package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/verify"
	"github.com/clinic/booking/web/httpx"
)

// VerificationTokenHeader carries the token of POST /v1/verifications on a
// booking: a booking whose patient e-mail it verifies asks for no code and
// spends nothing of its address's allowance.
const VerificationTokenHeader = "Verification-Token"

type verifyBody struct {
	Email string `json:"email"`
	Code  string `json:"code"`
}

type verifyAnswer struct {
	VerificationToken string `json:"verificationToken"`
	ExpiresAt         string `json:"expiresAt"`
}

// Verify answers POST /v1/verifications: the code e-mailed after a 428
// VERIFICATION_REQUIRED, for the address it went to, earns a token valid
// for 30 days.
func (s *Endpoints) Verify(c echo.Context) error {
	var body verifyBody
	if err := httpx.BindJSON(c, &body); err != nil {
		return err
	}
	token, err := s.deps.Verify.Redeem(c.Request().Context(), body.Email, body.Code, c.RealIP())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, verifyAnswer{
		VerificationToken: token,
		ExpiresAt:         time.Now().Add(verify.TokenLife).UTC().Format(time.RFC3339),
	})
}
