// The clinic's settings, behind the role table like every other staff
// action: the clinics package keeps and checks them, this is who may.

package practice

import (
	"context"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/staff"
)

// ClinicSettings are the settings of the user's clinic.
//
// Errors: FORBIDDEN (only admins).
func (s *Service) ClinicSettings(ctx context.Context, u staff.User) (clinics.Settings, error) {
	if err := u.May(staff.ActSettings); err != nil {
		return clinics.Settings{}, err
	}
	return clinics.NewService(s.pool).Settings(ctx, u.ClinicID)
}

// SaveClinicSettings saves the settings of the user's clinic, as
// clinics.Service.SaveSettings does (a new zone with bookings ahead only
// with confirmZone), with the user as the audit row's actor.
//
// Errors: FORBIDDEN (only admins), and those of clinics.Service.SaveSettings.
func (s *Service) SaveClinicSettings(ctx context.Context, u staff.User, in clinics.Settings, confirmZone bool) (clinics.SaveResult, error) {
	if err := u.May(staff.ActSettings); err != nil {
		return clinics.SaveResult{}, err
	}
	return clinics.NewService(s.pool).SaveSettings(ctx, u.ClinicID, u.Actor(), in, confirmZone)
}
