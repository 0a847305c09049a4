package setup

import (
	"github.com/clinic/booking/internal/apperr"
)

// fieldErrors turns an invalid-input error into a form's field map; any
// other error comes back to be handled as such.
func fieldErrors(err error) (map[string]string, error) {
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		return map[string]string{ae.Field(): ae.Message}, nil
	}
	return nil, err
}

func isStale(err error) bool {
	ae := apperr.As(err)
	return ae != nil && ae.Code == apperr.CodeConcurrencyConflict
}
