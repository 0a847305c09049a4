package practice_test

// Kiosk tokens: what admins see of them, and the boards' check.

import (
	"context"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// A clinic without tokens has a public board; once it has one, the board
// shows only to that token, until it is revoked. The list shows the
// token's name and state.
func TestStaffKioskTokensAndTheBoardsCheck(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := practice.New(pool, nil)
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()
	allowed := func(device string, want bool, what string) {
		t.Helper()
		ok, err := svc.KioskAllowed(ctx, c.ID, device)
		if err != nil || ok != want {
			t.Fatalf("%s: KioskAllowed = %v, %v; want %v", what, ok, err, want)
		}
	}

	allowed("", true, "no tokens yet, no device")
	_, err := svc.CreateKioskToken(ctx, admin, "  ")
	if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid || ae.Field() != "name" {
		t.Fatalf("a token without a name: %v, want INVALID_ARGUMENT on name", err)
	}
	token, err := svc.CreateKioskToken(ctx, admin, "Lobby")
	if err != nil || !strings.HasPrefix(token, "k_") {
		t.Fatalf("create: %q, %v", token, err)
	}
	list, err := svc.KioskTokens(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "Lobby" || list[0].ClinicID != c.ID || list[0].RevokedAt != nil || list[0].CreatedAt.IsZero() {
		t.Fatalf("KioskTokens: %+v", list)
	}
	allowed("", false, "a token exists, no device")
	allowed(token, true, "the token")
	allowed(token+"x", false, "another token")

	if err := svc.RevokeKioskToken(ctx, admin, list[0].ID); err != nil {
		t.Fatal(err)
	}
	list, err = svc.KioskTokens(ctx, admin)
	if err != nil || len(list) != 1 || list[0].RevokedAt == nil {
		t.Fatalf("after revoking: %+v, %v", list, err)
	}
	allowed(token, false, "the revoked token")
	allowed("", true, "every token revoked, no device")
	if n := testkit.CountAction(testkit.AuditRows(t, pool, "kiosk_token", list[0].ID.String()), "kiosk_token.revoke"); n != 1 {
		t.Errorf("%d kiosk_token.revoke audit rows, want 1", n)
	}
}
